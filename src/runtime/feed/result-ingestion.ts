/**
 * @module One consumer batch of finished rollouts into the trainer feed and the batch trackers,
 * one request per feed shard and one per batch tracker for the whole batch (not one per message):
 * at 100k concurrent rollouts ~10,000 results/s arrive, ten times what one Durable Object serves
 * (~1,000 req/s), while a batch of up to 100 messages costs each object one request.
 */
import { describeError } from "../../errors";
import type { FeedMember } from "../../schemas/feed";
import type { ResultMessage } from "../../schemas/result-message";
import { dataManagers } from "../../sink/training-modes";
import type { ResultAck } from "../batch/batch-results";
import type { IngestResult } from "./feed-results";

/** One result's fate in a batched ingest, and, when it completed its group, the group's members. */
export interface BatchIngestOutcome {
  result: IngestResult;
  /** Members of the group this result completed (in the feed's order), for its pack. */
  members?: FeedMember[];
}

/** A feed shard as batched ingestion needs it (in a Worker: the TrainerFeed stub). */
export interface FeedBatchPort {
  ingestBatch(messages: ResultMessage[]): Promise<BatchIngestOutcome[]>;
}

/** A batch tracker as batched ingestion needs it (in a Worker: the BatchTracker stub). */
export interface TrackerBatchPort {
  onResults(messages: ResultMessage[]): Promise<ResultAck[]>;
}

/** Where each result goes. */
export interface IngestionTargets {
  /** The name of the feed shard that holds group `uid`. */
  shardOf(uid: string): string;
  feed(shard: string): FeedBatchPort;
  tracker(batchId: string): TrackerBatchPort;
}

/** What a batch's delivery did: which messages must be retried, and which groups completed. */
export interface IngestionReport {
  /** Index (in the input) → why it must be retried by the queue. */
  retry: Map<number, string>;
  /** Groups that completed in this batch, with their members. */
  completed: Array<{ uid: string; members: FeedMember[] }>;
  /** Requests sent: feed shards and trackers (each once per batch). */
  requests: { feed: number; tracker: number };
}

function groupBy<K>(indices: number[], key: (index: number) => K): Map<K, number[]> {
  const out = new Map<K, number[]>();
  for (const index of indices) {
    const k = key(index);
    const list = out.get(k);
    if (list) list.push(index);
    else out.set(k, [index]);
  }
  return out;
}

/**
 * Delivers `messages`: those whose data manager feeds the trainer (`train`) to their feed shards,
 * those of a batch to its tracker, each target once with all of its messages. Both ends dedupe by
 * rollout id, so retrying a message that one end already took is harmless. A message is retried
 * when its data manager is unknown, the feed refused it, or a request carrying it failed; a
 * tracker that answers not-ok is logged (a report is progress, not data).
 */
export async function ingestResults(targets: IngestionTargets, messages: ResultMessage[]): Promise<IngestionReport> {
  const retry = new Map<number, string>();
  const completed: IngestionReport["completed"] = [];
  const toFeed: number[] = [];
  for (const [index, message] of messages.entries()) {
    try {
      if (dataManagers.resolve(message.data_manager).feeds_trainer) toFeed.push(index);
    } catch (error) {
      retry.set(index, describeError(error));
    }
  }
  const shards = groupBy(toFeed, (i) => targets.shardOf(messages[i]!.uid));
  const batches = groupBy(messages.flatMap((m, i) => (m.batch_id && !retry.has(i) ? [i] : [])), (i) => messages[i]!.batch_id!);
  const feedCalls = [...shards].map(async ([shard, indices]) => {
    try {
      const outcomes = await targets.feed(shard).ingestBatch(indices.map((i) => messages[i]!));
      outcomes.forEach(({ result, members }, k) => {
        const index = indices[k]!;
        if (!result.ok) retry.set(index, `trainer feed refused rollout ${messages[index]!.rollout_id} (${result.reason}): ${result.errors.map((e) => `${e.path}: ${e.message}`).join("; ")}`);
        else if (result.outcome === "completed" && members) completed.push({ uid: result.uid, members });
      });
    } catch (error) {
      for (const index of indices) retry.set(index, `feed shard ${shard}: ${describeError(error)}`);
    }
  });
  const trackerCalls = [...batches].map(async ([batchId, indices]) => {
    try {
      const acks = await targets.tracker(batchId).onResults(indices.map((i) => messages[i]!));
      acks.forEach((ack, k) => {
        if (!ack.ok) console.warn("batch result not recorded", { rollout_id: messages[indices[k]!]!.rollout_id, reason: ack.reason, message: ack.message });
      });
    } catch (error) {
      for (const index of indices) retry.set(index, `batch tracker ${batchId}: ${describeError(error)}`);
    }
  });
  await Promise.all([...feedCalls, ...trackerCalls]);
  return { retry, completed, requests: { feed: shards.size, tracker: batches.size } };
}
