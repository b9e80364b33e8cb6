/** @module The `edge-rollout-batches` consumer: batch messages from any producer start batches. */
import { objects } from "../src/runtime/objects";
import { BatchMessage } from "../src/schemas/batch";
import { startBatch } from "../src/runtime/batch";
import type { AppEnv } from "./env";
import { consumeEach } from "./queue-messages";

/**
 * Starts each batch (the same path as `POST /v1/batches`). Starting is idempotent by batch id, so a
 * redelivered message is harmless. A malformed message, invalid rows or a conflicting batch are
 * acknowledged and logged (retrying cannot fix them); a failure to reach the tracker is retried.
 */
export async function handleBatchesBatch(batch: MessageBatch<unknown>, env: AppEnv): Promise<void> {
  await consumeEach(
    batch,
    BatchMessage,
    "batch",
    async (message) => {
      const started = await startBatch(objects(env), message);
      if (!started.ok) {
        const details = started.reason === "invalid" ? started.errors : started.message;
        console.error("batch message refused", {
          batch_id: message.batch_id,
          reason: started.reason,
          details,
        });
      }
    },
    5,
  );
}
