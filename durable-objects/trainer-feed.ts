/** @module The trainer feed Durable Object: finished rollouts grouped by uid, leased to a trainer and acked; its RPC methods, each served by a part of the shard (src/runtime/feed/feed-parts.ts). */
import { RequestCounter, type RequestCounts } from "../src/runtime";
import { DurableObject } from "cloudflare:workers";
import { feedParts, type FeedParts, type TrainerFeedApi } from "../src/runtime/feed";
import { installSurface } from "../src/runtime/objects";

/** The methods installed from the table below; the class writes out the rest of TrainerFeedApi. */
type Installed = Omit<TrainerFeedApi, "requestCounts">;

/** The installed methods, as TypeScript sees them (the class still `implements` the whole interface). */
export interface TrainerFeed extends Installed {}

/**
 * GRPO groups on their way to the trainer: held until complete (or timed out), dropped when too
 * stale for their training mode, leased on pull and deleted on ack. One instance per feed shard
 * (FEED_SHARDS; "default" when there is one, see src/runtime/feed/feed-shards.ts), for every
 * training mode; the alarm expires leases and releases timed-out groups. Reading samples from R2
 * is left to the Worker, so calls here stay small; only pack compaction copies bytes, in R2.
 */
export class TrainerFeed extends DurableObject<Env> implements TrainerFeedApi {
  readonly #parts: FeedParts;
  readonly #requests = new RequestCounter();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#parts = feedParts(ctx, env, this.#requests);
  }

  static {
    installSurface<TrainerFeed, Installed>(TrainerFeed, (s) => s.#requests, {
      ingest: (s, message) => s.#parts.core.ingest(message),
      ingestBatch: (s, messages, onlyKnown) => s.#parts.shard.ingestBatch(messages, onlyKnown),
      holds: (s, rolloutId) => s.#parts.core.holds(rolloutId),
      holdsMany: (s, rolloutIds) => rolloutIds.map((id) => s.#parts.core.holds(id)),
      droppedGroups: (s, batchId) => s.#parts.core.droppedGroups(batchId),
      pull: (s, request, currentPolicyVersion, limits, leaseId) =>
        s.#parts.shard.pull(request, currentPolicyVersion, limits, leaseId),
      recordPacks: (s, refs) => s.#parts.packs.record(refs),
      returnGroups: (s, leaseId, uids) => s.#parts.core.returnGroups(leaseId, uids),
      ack: (s, leaseId) => s.#parts.core.ack(leaseId),
      stats: (s, query) => s.#parts.core.stats(query),
      config: (s) => s.#parts.core.config(),
      configure: (s, patch) => s.#parts.core.configure(patch),
    });
  }

  /** Requests this object served since it started, by method (benches count requests per rollout with it). */
  requestCounts(): RequestCounts {
    return this.#requests.read();
  }

  /** Expires leases, releases timed-out groups and re-arms. */
  override async alarm(): Promise<void> {
    this.#requests.count("alarm");
    await this.#parts.core.alarm();
  }
}
