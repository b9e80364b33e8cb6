/** @module The ROLLOUT_RESULTS consumer: finished rollouts into the trainer feed and batch progress, one request per object per batch. */
import { objects } from "../src/runtime/objects";
import {
  answerDeliveryChecks,
  confirmDeliveries,
  ingestResults,
  packCompletedGroups,
  type CompletedGroup,
  type IngestionTargets,
} from "../src/runtime/feed";
import { withinDeadline } from "../src/runtime";
import { DeliveryCheckMessage } from "../src/schemas/delivery-check-message";
import { ResultMessage } from "../src/schemas/result-message";
import { r2Blobs, r2SizedReader } from "../src/sink/publication";
import type { AppEnv } from "./env";

/**
 * How long one consumer batch waits for each of its phases (ingestion, packing, delivery checks).
 * A call that never answers would otherwise hold the batch, and a queue dispatches its next batch
 * only when the last one returns (Miniflare's broker: forever; production: until the consumer's
 * 15-minute wall limit): past it the batch's messages are retried (ingestion is idempotent by
 * rollout id) or, for packs, left to the per-member path, and the phase that stalled is logged.
 */
export const CONSUMER_PHASE_MS = 60_000;

function targets(env: AppEnv): IngestionTargets {
  const dir = objects(env);
  return { feed: dir.feed(), tracker: dir.batch };
}

/**
 * Packs the groups this batch completed into one object and tells each feed shard where its
 * groups are (one request per shard). Packing reads at most MAX_PACK_READS_PER_BATCH member
 * tables (subrequests of this invocation). A failure only costs speed: pulls read unpacked
 * groups' members, so it is logged, never retried.
 */
async function packAndRecord(env: AppEnv, completed: CompletedGroup[]): Promise<void> {
  try {
    const packed = await withinDeadline(
      packCompletedGroups(r2SizedReader(env.TRAJECTORIES), r2Blobs(env.TRAJECTORIES), completed),
      CONSUMER_PHASE_MS,
      "packing completed groups",
    );
    const shardOf = new Map(completed.map((g) => [g.uid, g.shard]));
    await withinDeadline(
      objects(env)
        .feed()
        .recordPacks(packed.refs.map((ref) => ({ ...ref, shard: shardOf.get(ref.uid) }))),
      CONSUMER_PHASE_MS,
      "recording packs",
    );
  } catch (error) {
    console.warn("group packs not recorded; pulls read those groups' members", {
      error: error instanceof Error ? error.message : String(error),
    });
  }
}

/**
 * Delivers the batch's pointers to the feed and to their batches' trackers: one request per
 * feed shard and per tracker for the whole batch. Both ends dedupe by rollout id, so a
 * redelivered message is harmless; a failure is retried by the queue (bounded by max_retries,
 * then the dead-letter queue), a malformed message is acknowledged and logged. Groups the batch
 * completed are then packed (one R2 object each) for pulls to read. Sessions' delivery checks
 * in the batch are answered after its results are in: one `holdsMany` per feed shard for all of
 * them, then each session is told.
 */
export async function handleResultsBatch(batch: MessageBatch<unknown>, env: AppEnv): Promise<void> {
  const answer = (rolloutId: string, held: boolean) =>
    objects(env).session(rolloutId).deliveryChecked(held);
  const valid: Array<{ message: Message<unknown>; body: ResultMessage }> = [];
  const checks: Array<{ message: Message<unknown>; body: DeliveryCheckMessage }> = [];
  for (const message of batch.messages) {
    const parsed = ResultMessage.safeParse(message.body);
    const check = parsed.success ? null : DeliveryCheckMessage.safeParse(message.body);
    if (parsed.success) valid.push({ message, body: parsed.data });
    else if (check?.success) checks.push({ message, body: check.data });
    else {
      console.error("dropping malformed result message", {
        id: message.id,
        issues: parsed.error.issues.slice(0, 20),
      });
      message.ack();
    }
  }
  // An unreadable FEED_SHARDS throws here: the whole batch is retried (then dead-lettered), never split by a guess.
  if (valid.length > 0) {
    const report = await withinDeadline(
      ingestResults(
        targets(env),
        valid.map((v) => v.body),
      ),
      CONSUMER_PHASE_MS,
      "ingesting results",
    ).catch((error: unknown) => {
      // Every message goes back to the queue: the feed and trackers dedupe what did arrive.
      console.error("results batch retried", {
        error: error instanceof Error ? error.message : String(error),
      });
      return null;
    });
    if (report === null) {
      for (const { message } of valid) message.retry({ delaySeconds: 2 });
      return;
    }
    if (report.completed.length > 0 && env.FEED_GROUP_PACKS !== "off")
      await packAndRecord(env, report.completed);
    settle(valid, report.retry);
    // After the acks: a confirmation that stalls or fails only leaves a session to check itself.
    await withinDeadline(
      confirmDeliveries(
        answer,
        report.fed.map((i) => valid[i]!.body.rollout_id),
      ),
      CONSUMER_PHASE_MS,
      "confirming deliveries",
    ).catch((error: unknown) =>
      console.warn("deliveries not confirmed; sessions will check them", {
        error: error instanceof Error ? error.message : String(error),
      }),
    );
  }
  if (checks.length > 0) {
    const answered = await withinDeadline(
      answerDeliveryChecks(
        objects(env).feed(),
        answer,
        checks.map((c) => c.body),
      ),
      CONSUMER_PHASE_MS,
      "answering delivery checks",
    ).catch((error: unknown) => {
      console.error("delivery checks retried", {
        error: error instanceof Error ? error.message : String(error),
      });
      return new Map(checks.map((_, i) => [i, "deadline"] as [number, string]));
    });
    settle(checks, answered);
  }
}

/** Acks each message, or retries it (2 s later) when `retry` names it. */
function settle(messages: Array<{ message: Message<unknown> }>, retry: Map<number, string>): void {
  for (const [index, { message }] of messages.entries()) {
    const why = retry.get(index);
    if (why === undefined) message.ack();
    else {
      console.error("result message failed", { id: message.id, error: why });
      message.retry({ delaySeconds: 2 });
    }
  }
}
