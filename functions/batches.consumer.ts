/** @module The `edge-rollout-batches` consumer: batch messages from any producer start batches. */
import { BatchMessage } from "../src/schemas/batch";
import { startBatch } from "./batch-stub";
import type { AppEnv } from "./env";

/**
 * Starts each batch (the same path as `POST /v1/batches`). Starting is idempotent by batch id, so a
 * redelivered message is harmless. A malformed message, invalid rows or a conflicting batch are
 * acknowledged and logged (retrying cannot fix them); a failure to reach the tracker is retried.
 */
export async function handleBatchesBatch(batch: MessageBatch<unknown>, env: AppEnv): Promise<void> {
  await Promise.all(
    batch.messages.map(async (message) => {
      const parsed = BatchMessage.safeParse(message.body);
      if (!parsed.success) {
        console.error("dropping malformed batch message", { id: message.id, issues: parsed.error.issues.slice(0, 20) });
        message.ack();
        return;
      }
      try {
        const started = await startBatch(env, parsed.data);
        if (!started.ok) {
          const details = started.reason === "invalid" ? started.errors : started.message;
          console.error("batch message refused", { batch_id: parsed.data.batch_id, reason: started.reason, details });
        }
        message.ack();
      } catch (error) {
        console.error("batch start failed", { batch_id: parsed.data.batch_id, error: String(error) });
        message.retry({ delaySeconds: 5 });
      }
    }),
  );
}
