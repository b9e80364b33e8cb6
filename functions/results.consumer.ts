/** @module The ROLLOUT_RESULTS consumer: finished rollouts into the trainer feed and batch progress. */
import { ResultMessage } from "../src/schemas/result-message";
import { reportBatchResult } from "../src/runtime/batch/batch-delivery";
import { ingestResult } from "../src/runtime/feed/feed-delivery";
import { batchObjects } from "./batch-stub";
import type { AppEnv } from "./env";
import { feedStub } from "./feed-stub";
import { consumeEach } from "./queue-messages";

/**
 * Delivers each pointer to the feed and to its batch. Both ends dedupe by rollout id, so a
 * redelivered message is harmless; a failure is retried by the queue (bounded by max_retries,
 * then the dead-letter queue), a malformed message is acknowledged and logged.
 */
export async function handleResultsBatch(batch: MessageBatch<unknown>, env: AppEnv): Promise<void> {
  await consumeEach(batch, ResultMessage, "result", async (result) => {
    await Promise.all([ingestResult(feedStub(env), result), reportBatchResult(batchObjects(env), result)]);
  });
}
