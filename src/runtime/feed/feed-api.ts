/**
 * @module What a TrainerFeed object (one feed shard) offers over RPC: the interface the class
 * implements and its stubs are typed by. The feed as a whole is the ShardedFeed over these.
 */
import { methodNames } from "../../rpc-surface";
import type { DroppedGroup, FeedConfig, FeedStats, StatsQueryInput } from "../../schemas/feed";
import type { RequestCounts } from "../request-counter";
import type { PullLimits } from "./feed-core";
import type { AckResult, ConfigureResult, IngestResult, PullResult } from "./feed-results";
import type { PackRef } from "./pack-index";
import type { BatchIngestOutcome } from "./result-ingestion";

/** One feed shard: GRPO groups held until complete, leased on pull, deleted on ack. */
export interface TrainerFeedApi {
  /** Holds one finished rollout (a ResultMessage; validated by the object) in its group; idempotent by rollout id. */
  ingest(message: unknown): Promise<IngestResult>;
  /** Holds a consumer batch's results, each as `ingest` would; a result that completes its group comes back with its members. */
  ingestBatch(messages: unknown[], onlyKnown?: boolean): Promise<BatchIngestOutcome[]>;
  /** Whether a result of `rolloutId` was ingested (a session confirming its delivery asks this). */
  holds(rolloutId: string): boolean;
  /** Which of `rolloutIds` were ingested (one request for a batch of delivery checks). */
  holdsMany(rolloutIds: string[]): boolean[];
  /** The groups of a batch dropped instead of delivered (read only: nothing is pulled or dropped). */
  droppedGroups(batchId: string): DroppedGroup[];
  /** Drops stale groups at `currentPolicyVersion`, then leases ready groups; `pack_refs` says where their samples are packed. */
  pull(
    request: unknown,
    currentPolicyVersion: number,
    limits?: PullLimits,
    leaseId?: string,
  ): Promise<PullResult & { pack_refs?: Record<string, PackRef> }>;
  /** Records where the results consumer packed groups of this shard (one request per consumer batch). */
  recordPacks(refs: Array<{ uid: string } & PackRef>): void;
  /** Puts groups of a live lease back to ready (an inline pull over its budget); returns how many. */
  returnGroups(leaseId: string, uids: string[]): Promise<number>;
  /** Deletes a lease's groups (idempotent); an unknown or expired lease is a result, not a throw. */
  ack(leaseId: string): Promise<AckResult>;
  /** Counters and live counts, in total, per training mode and per batch (narrowed by `query`). */
  stats(query?: StatsQueryInput): Promise<FeedStats>;
  /** The config in force. */
  config(): FeedConfig;
  /** Changes the config (e.g. `group_timeout_ms`). */
  configure(patch: unknown): Promise<ConfigureResult>;
  /** Requests this object served since it started, by method (benches count requests per rollout with it). */
  requestCounts(): RequestCounts;
}

/** Every method of TrainerFeedApi, at run time. */
export const TRAINER_FEED_METHODS = methodNames<TrainerFeedApi>({
  ingest: true,
  ingestBatch: true,
  holds: true,
  holdsMany: true,
  droppedGroups: true,
  pull: true,
  recordPacks: true,
  returnGroups: true,
  ack: true,
  stats: true,
  config: true,
  configure: true,
  requestCounts: true,
});
