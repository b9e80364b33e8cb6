/**
 * @module One consumer batch of finished rollouts into the trainer feed and the batch trackers,
 * one request per feed shard and one per batch tracker for the whole batch (not one per message):
 * at 100k concurrent rollouts ~10,000 results/s arrive, ten times what one Durable Object serves
 * (~1,000 req/s), while a batch of up to 100 messages costs each object one request.
 */
import { describeError } from "../../errors";
import type { FeedMember } from "../../schemas/feed";
import type { ResultMessage } from "../../schemas/result-message";
import { dataManagers } from "../../training/training-modes";
import type { IngestResult } from "./feed-results";

/** One result's fate in a batched ingest, and, when it completed its group, the group's members. */
export interface BatchIngestOutcome {
  result: IngestResult;
  /** Members of the group this result completed (in the feed's order), for its pack. */
  members?: FeedMember[];
  /** Asked to take only results of groups it already knows (a previous layout's shard): this one is not. */
  elsewhere?: true;
  /** The shard that took it (set by the sharded feed). */
  shard?: string;
}

/** The feed as batched ingestion needs it (in a Worker: the sharded feed over TrainerFeed stubs). */
export interface FeedBatchPort {
  /** One request per shard holding any of `messages`' groups; outcomes in input order. */
  ingestBatch(
    messages: ResultMessage[],
  ): Promise<{ outcomes: BatchIngestOutcome[]; requests: number }>;
}

/**
 * A batch tracker as batched ingestion needs it (in a Worker: the BatchTracker stub, whose
 * `ResultAck`s are these): per result, recorded, or why not (logged; the queue does not retry it).
 */
export interface TrackerBatchPort {
  onResults(
    messages: ResultMessage[],
  ): Promise<Array<{ ok: true } | { ok: false; reason: string; message: string }>>;
}

/** Where each result goes. */
export interface IngestionTargets {
  feed: FeedBatchPort;
  tracker(batchId: string): TrackerBatchPort;
}

/** What a batch's delivery did: which messages must be retried, and which groups completed. */
export interface IngestionReport {
  /** Index (in the input) → why it must be retried by the queue. */
  retry: Map<number, string>;
  /** Groups that completed in this batch, with their members and the shard that holds them. */
  completed: Array<{ uid: string; members: FeedMember[]; shard?: string }>;
  /** Indices (in the input) of the results the feed now holds: their sessions' deliveries are confirmed. */
  fed: number[];
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
export async function ingestResults(
  targets: IngestionTargets,
  messages: ResultMessage[],
): Promise<IngestionReport> {
  const retry = new Map<number, string>();
  const completed: IngestionReport["completed"] = [];
  const fed: number[] = [];
  const toFeed: number[] = [];
  for (const [index, message] of messages.entries()) {
    try {
      if (dataManagers.resolve(message.data_manager).feeds_trainer) toFeed.push(index);
    } catch (error) {
      retry.set(index, describeError(error));
    }
  }
  const batches = groupBy(
    messages.flatMap((m, i) => (m.batch_id && !retry.has(i) ? [i] : [])),
    (i) => messages[i]!.batch_id!,
  );
  let feedRequests = 0;
  const feedCall = (async () => {
    if (toFeed.length === 0) return;
    try {
      const { outcomes, requests } = await targets.feed.ingestBatch(
        toFeed.map((i) => messages[i]!),
      );
      feedRequests = requests;
      outcomes.forEach(({ result, members, shard }, k) => {
        const index = toFeed[k]!;
        if (!result.ok)
          retry.set(
            index,
            `trainer feed refused rollout ${messages[index]!.rollout_id} (${result.reason}): ${result.errors.map((e) => `${e.path}: ${e.message}`).join("; ")}`,
          );
        else {
          fed.push(index);
          if (result.outcome === "completed" && members)
            completed.push({ uid: result.uid, members, shard });
        }
      });
    } catch (error) {
      for (const index of toFeed) retry.set(index, `trainer feed: ${describeError(error)}`);
    }
  })();
  const trackerCalls = [...batches].map(async ([batchId, indices]) => {
    try {
      const acks = await targets.tracker(batchId).onResults(indices.map((i) => messages[i]!));
      acks.forEach((ack, k) => {
        if (!ack.ok)
          console.warn("batch result not recorded", {
            rollout_id: messages[indices[k]!]!.rollout_id,
            reason: ack.reason,
            message: ack.message,
          });
      });
    } catch (error) {
      for (const index of indices)
        retry.set(index, `batch tracker ${batchId}: ${describeError(error)}`);
    }
  });
  await Promise.all([feedCall, ...trackerCalls]);
  return { retry, completed, fed, requests: { feed: feedRequests, tracker: batches.size } };
}
