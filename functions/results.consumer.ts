/** @module The ROLLOUT_RESULTS consumer: finished rollouts into the trainer feed and batch progress. */
import { ResultMessage } from "../src/schemas/result-message";
import { reportBatchResult } from "./batch-stub";
import type { AppEnv } from "./env";
import { ingestResult } from "./feed-stub";

/**
 * Delivers each pointer to the feed and to its batch. Both ends dedupe by rollout id, so a
 * redelivered message is harmless; a failure is retried by the queue (bounded by max_retries,
 * then the dead-letter queue), a malformed message is acknowledged and logged.
 */
export async function handleResultsBatch(batch: MessageBatch<unknown>, env: AppEnv): Promise<void> {
  await Promise.all(
    batch.messages.map(async (message) => {
      const parsed = ResultMessage.safeParse(message.body);
      if (!parsed.success) {
        console.error("dropping malformed result message", { id: message.id, issues: parsed.error.issues });
        message.ack();
        return;
      }
      try {
        await Promise.all([ingestResult(env, parsed.data), parsed.data.batch_id ? reportBatchResult(env, parsed.data) : Promise.resolve()]);
        message.ack();
      } catch (error) {
        console.error("result delivery failed", { rollout_id: parsed.data.rollout_id, error: String(error) });
        message.retry({ delaySeconds: 2 });
      }
    }),
  );
}
