/** @module Which finished rollouts reach the trainer feed. */
import { InvalidInputError } from "../../errors";
import type { ResultMessage } from "../../schemas/result-message";
import { dataManagers } from "../../sink/training-modes";
import type { IngestResult } from "./feed-results";

/** The trainer feed as delivery needs it (in a Worker: the TrainerFeed stub). */
export interface FeedIngestPort {
  ingest(message: ResultMessage): Promise<IngestResult>;
}

/**
 * Hands one finished rollout to the trainer feed if its data manager feeds the trainer (`train`);
 * `infer` results are only stored. An unknown data manager or a message the feed refuses throws,
 * so the queue retries it and then parks it in the dead-letter queue where it can be inspected.
 */
export async function ingestResult(feed: FeedIngestPort, message: ResultMessage): Promise<void> {
  if (!dataManagers.resolve(message.data_manager).feeds_trainer) return;
  const result = await feed.ingest(message);
  if (!result.ok) {
    throw new InvalidInputError(`trainer feed refused rollout ${message.rollout_id} (${result.reason}): ${result.errors.map((e) => `${e.path}: ${e.message}`).join("; ")}`, { details: result.errors });
  }
}
