/** @module Starting a batch and reporting a finished rollout to it: the rules the Worker applies between the queues, the trackers and the catalog. */
import type { BatchMessage } from "../../schemas/batch";
import { type BatchCatalogEntry, seriesOf } from "../../schemas/batch-listing";
import type { ResultMessage } from "../../schemas/result-message";
import type { RegisterResult } from "../catalog/batch-catalog-core";
import type { ResultAck, SubmitResult } from "./batch-results";

/** The objects a batch start and a result report reach (in a Worker: the object directory, `objects(env)`). */
export interface BatchObjects {
  /** The tracker of batch `batchId`. */
  batch(batchId: string): {
    submit(message: BatchMessage): Promise<SubmitResult>;
    onResult(message: ResultMessage): Promise<ResultAck>;
  };
  catalog(): { register(entry: BatchCatalogEntry): Promise<RegisterResult> };
}

/**
 * Starts a batch: the one code path behind `POST /v1/batches` and the `edge-rollout-batches`
 * queue. The tracker validates, loads the dataset, stores the rows and releases the first chunk;
 * the same message again is a no-op.
 */
export async function startBatch(
  objects: BatchObjects,
  message: BatchMessage,
): Promise<SubmitResult> {
  const started = await objects.batch(message.batch_id).submit(message);
  // Registered on every accepted submit, not only the first: a Worker that died between the two
  // calls leaves the batch unlisted until the same submit (idempotent) comes again.
  if (started.ok) {
    const { progress } = started;
    const entry = {
      batch_id: progress.batch_id,
      agent: progress.agent,
      mode: progress.mode,
      training_mode: progress.training_mode,
      series: message.series ?? seriesOf(progress.batch_id),
      rollouts: progress.rollouts,
      created_at: progress.created_at,
    };
    const registered = await objects.catalog().register(entry);
    if (!registered.ok)
      console.warn("batch not listed in the catalog", {
        batch_id: progress.batch_id,
        errors: registered.errors,
      });
  }
  return started;
}

/** Reports one finished rollout to its batch's progress (the tracker dedupes by rollout id); a rollout of no batch is skipped. */
export async function reportBatchResult(
  objects: BatchObjects,
  message: ResultMessage,
): Promise<void> {
  if (!message.batch_id) return;
  const ack = await objects.batch(message.batch_id).onResult(message);
  if (!ack.ok)
    console.warn("batch result not recorded", {
      rollout_id: message.rollout_id,
      reason: ack.reason,
      message: ack.message,
    });
}
