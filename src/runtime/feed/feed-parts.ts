/**
 * @module What one TrainerFeed object (a feed shard) is made of: the group rules over its SQLite
 * (FeedCore), its pack refs and their compaction, and the batch and pull calls over both, wired to
 * the object's state and bindings (durable-objects/trainer-feed.ts serves its RPC methods with them).
 */
import type { RequestCounter } from "../request-counter";
import { objects, type ObjectBindings } from "../objects/object-directory";
import { FeedCore } from "./feed-core";
import { PackCompactor } from "./pack-compactor";
import { PackIndex } from "./pack-index";
import { FeedShardOps, type LeaseIdChoice } from "./shard-ops";

/** The bindings a feed shard is wired from (the Worker's `Env` satisfies them). */
export type FeedBindings = ObjectBindings & {
  /** Where the results consumer writes group packs, and compaction rewrites them. */
  TRAJECTORIES: R2Bucket;
};

/** A feed shard's concerns, each serving some of the object's methods. */
export interface FeedParts {
  /** Ingest, holds, leases, acks, stats, config and the alarm (the group rules). */
  core: FeedCore;
  /** Batch ingestion and pulls with their pack refs. */
  shard: FeedShardOps;
  /** Pack refs as the consumer records them, and their compaction. */
  packs: PackCompactor;
}

/**
 * The parts of the feed shard whose state is `ctx`, wired to `env`'s bindings; a compaction counts
 * one `compaction` request on `requests`.
 */
export function feedParts(
  ctx: DurableObjectState,
  env: FeedBindings,
  requests: RequestCounter,
): FeedParts {
  const storage = ctx.storage;
  const lease: LeaseIdChoice = { id: undefined };
  const core = new FeedCore({
    storage: {
      sql: storage.sql,
      transactionSync: (fn) => storage.transactionSync(fn),
      setAlarm: (time) => storage.setAlarm(time),
    },
    now: () => Date.now(),
    // The sharded feed's id for the pull in progress, so one lease spans every shard it reached.
    newLeaseId: () => lease.id ?? `lease-${crypto.randomUUID()}`,
    // After the pull answered: a lost notice leaves that batch short, never blocks a trainer.
    onStaleDrops: (drops) =>
      ctx.waitUntil(
        Promise.all(
          drops.map((drop) =>
            objects(env)
              .batch(drop.batch_id)
              .groupDropped(drop)
              .catch((error: unknown) =>
                console.error(
                  "feed: telling batch",
                  drop.batch_id,
                  "of a stale drop failed",
                  error,
                ),
              ),
          ),
        ),
      ),
  });
  const index = new PackIndex(storage.sql);
  const packs = new PackCompactor({
    packs: index,
    bucket: env.TRAJECTORIES,
    minBytes: () => core.config().pack_compaction_min_bytes,
    keepAlive: (work) => ctx.waitUntil(work),
    onCompaction: () => requests.count("compaction"),
    now: () => Date.now(),
    newId: () => crypto.randomUUID(),
  });
  return { core, shard: new FeedShardOps(core, index, lease), packs };
}
