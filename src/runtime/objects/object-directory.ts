/**
 * @module The object directory: the one way a route, a queue consumer or a Durable Object reaches
 * a Durable Object (`objects(env).session(id)`, `.feed()`, `.policy()`, …). Every `idFromName` and
 * namespace `get` of the Worker is here (test/unit/architecture/object-directory.test.ts checks
 * it), and every stub is typed from the interface beside its object's core (`RpcSurface<
 * TrainerFeedApi>`, src/runtime/feed/feed-api.ts), which the class `implements`: no caller needs a
 * class, so no type-only circle between two objects forces a hand-written surface.
 *
 * Why in `src/runtime/`: `functions/` and `durable-objects/` both reach objects, and both import
 * `src/runtime/` already (the objects' logic), while `src/runtime/` imports neither; so both can
 * import this without an import pointing back up. It needs nothing from either: the bindings'
 * types are the platform's ambient ones (as `src/sink/publication/r2-blobs.ts` takes an `R2Bucket`), and it
 * asks only for the bindings it uses (`ObjectBindings`, which the Worker's `AppEnv` satisfies).
 */
import { MisconfiguredError } from "../../errors";
import type { ReleasingPolicyPort } from "../../gateway/release-on-next-admission";
import type { RpcSurface } from "../../rpc-surface";
import type { BatchTrackerApi } from "../batch/batch-tracker-api";
import type { BatchCatalogApi } from "../catalog/batch-catalog-api";
import type { ClaimQueueApi } from "../claims/claim-queue-api";
import type { TrainerFeedApi } from "../feed/feed-api";
import { feedLayout, isLayoutProblem, type FeedLayout } from "../feed/feed-shards";
import { ShardedFeed } from "../feed/sharded-feed";
import {
  admissionShardCount,
  admissionShardName,
  admissionShardOf,
  CATALOG_OBJECT_NAME,
  claimQueueName,
  FEED_OBJECT_NAME,
  ONLINE_CONTROL_OBJECT_NAME,
  POLICY_OBJECT_NAME,
} from "../object-names";
import type { AdmissionShardApi } from "../policy/admission-shard-api";
import type { PolicyStoreApi } from "../policy/policy-store-api";
import type { RolloutSessionApi } from "../session";
import type { OnlineAppApi, OnlineControlApi } from "../online";

/** A RolloutSession stub (it satisfies the driver's SessionHandle). */
export type SessionRpc = RpcSurface<RolloutSessionApi>;
/** The PolicyStore stub. */
export type PolicyRpc = RpcSurface<PolicyStoreApi>;
/** An AdmissionShard stub. */
export type AdmissionShardRpc = RpcSurface<AdmissionShardApi>;
/** A TrainerFeed stub: one feed shard. */
export type FeedRpc = RpcSurface<TrainerFeedApi>;
/** A BatchTracker stub. */
export type BatchRpc = RpcSurface<BatchTrackerApi>;
/** The BatchCatalog stub. */
export type CatalogRpc = RpcSurface<BatchCatalogApi>;
/** A ClaimQueue stub: one shard of a runner agent's queue. */
export type ClaimQueueRpc = RpcSurface<ClaimQueueApi>;
/** The OnlineControl stub. */
export type OnlineControlRpc = RpcSurface<OnlineControlApi>;
/** An OnlineApp stub: one application's sessions. */
export type OnlineAppRpc = RpcSurface<OnlineAppApi>;

/**
 * What the directory uses of a Durable Object namespace binding. Any class's namespace is one: the
 * generated `Env` types each binding by its class, which the directory must not need.
 */
export interface ObjectNamespace {
  idFromName(name: string): DurableObjectId;
  get(id: DurableObjectId): unknown;
}

/** The bindings the directory reads (wrangler.toml's Durable Object bindings and shard counts). */
export interface ObjectBindings {
  ROLLOUT_SESSION: ObjectNamespace;
  POLICY_STORE: ObjectNamespace;
  ADMISSION_SHARD: ObjectNamespace;
  TRAINER_FEED: ObjectNamespace;
  BATCH_TRACKER: ObjectNamespace;
  BATCH_CATALOG: ObjectNamespace;
  CLAIM_QUEUE: ObjectNamespace;
  ONLINE_CONTROL: ObjectNamespace;
  ONLINE_APP: ObjectNamespace;
  /** Admission shards (default 16, see ../object-names.ts). */
  ADMISSION_SHARDS?: string;
  /** Feed shards and, while the count changes, the previous count (see feed-shards.ts). */
  FEED_SHARDS?: string;
  FEED_PREVIOUS_SHARDS?: string;
}

/**
 * Every Durable Object, by what names it. Each method makes a new stub (a stub belongs to the
 * request that made it). The methods are plain functions, so they can be passed on unbound, and
 * the directory is itself the port of code that needs only some of them (`startBatch(objects(env),
 * message)`, src/runtime/batch/batch-delivery.ts).
 */
export interface ObjectDirectory {
  /** The session of rollout `rolloutId` (one object per rollout, named by its id). */
  session(rolloutId: string): SessionRpc;
  /** The one PolicyStore. */
  policy(): PolicyRpc;
  /** The admission shard that admits `rolloutId`'s calls. */
  shard(rolloutId: string): AdmissionShardRpc;
  /** Every admission shard, by index. */
  shards(): AdmissionShardRpc[];
  /**
   * Admission as the gateway sees it: each rollout's calls go to its own shard, never to the
   * policy object. Keeps each shard's stub for the port's life (make one per request), so a
   * drive's acquires and releases reuse one stub instead of setting one up per RPC, a measured
   * share of each call's CPU.
   */
  admission(): ReleasingPolicyPort;
  /** The feed over its shards (FEED_SHARDS), as routes, the results consumer and batch reports use it; throws as `feedLayout()`. */
  feed(): ShardedFeed;
  /** The layout FEED_SHARDS / FEED_PREVIOUS_SHARDS name; a MisconfiguredError (503, naming the variable) if either is invalid. */
  feedLayout(): FeedLayout;
  /** One TrainerFeed object by name: the single feed by default; tests name their own. */
  feedShard(name?: string): FeedRpc;
  /** Shard `shard` of runner agent `agent`'s claim queue (see ../object-names.ts). */
  claims(agent: string, shard: number): ClaimQueueRpc;
  /** The tracker of batch `batchId` (one object per batch, named by its id). */
  batch(batchId: string): BatchRpc;
  /** The one BatchCatalog. */
  catalog(): CatalogRpc;
  /** The one OnlineControl: applications, keys, serving versions and split. */
  onlineControl(): OnlineControlRpc;
  /** The sessions of application `appId` (one object per application, named by its id). */
  onlineApp(appId: string): OnlineAppRpc;
}

/**
 * Admission shard ids per namespace binding, kept for the isolate's life. An id is a plain value
 * (unlike a stub, which belongs to the request that made it), and every model call needs its
 * shard's id twice; deriving it by name each time was a measured cost per call.
 */
const shardIds = new WeakMap<ObjectNamespace, Map<number, DurableObjectId>>();

function shardId(namespace: ObjectNamespace, index: number): DurableObjectId {
  let ids = shardIds.get(namespace);
  if (!ids) shardIds.set(namespace, (ids = new Map()));
  let id = ids.get(index);
  if (!id) ids.set(index, (id = namespace.idFromName(admissionShardName(index))));
  return id;
}

/** A stub of `namespace`'s object named `name`, typed by its object's interface. */
function named<T>(namespace: ObjectNamespace, name: string): RpcSurface<T> {
  return namespace.get(namespace.idFromName(name)) as unknown as RpcSurface<T>;
}

/** The directory over `env`'s bindings. */
export function objects(env: ObjectBindings): ObjectDirectory {
  const shardAt = (index: number) =>
    env.ADMISSION_SHARD.get(shardId(env.ADMISSION_SHARD, index)) as unknown as AdmissionShardRpc;
  const layout = (): FeedLayout => {
    const found = feedLayout(env);
    if (isLayoutProblem(found))
      throw new MisconfiguredError(found.message, {
        details: [{ path: found.variable, message: found.message }],
      });
    return found;
  };
  const feedShard = (name: string = FEED_OBJECT_NAME) =>
    named<TrainerFeedApi>(env.TRAINER_FEED, name);
  return {
    session: (rolloutId) => named<RolloutSessionApi>(env.ROLLOUT_SESSION, rolloutId),
    policy: () => named<PolicyStoreApi>(env.POLICY_STORE, POLICY_OBJECT_NAME),
    shard: (rolloutId) => shardAt(admissionShardOf(rolloutId, env.ADMISSION_SHARDS)),
    shards: () =>
      Array.from({ length: admissionShardCount(env.ADMISSION_SHARDS) }, (_, k) => shardAt(k)),
    admission: () => {
      const stubs = new Map<number, AdmissionShardRpc>();
      const stubOf = (rolloutId: string) => {
        const index = admissionShardOf(rolloutId, env.ADMISSION_SHARDS);
        let stub = stubs.get(index);
        if (!stub) stubs.set(index, (stub = shardAt(index)));
        return stub;
      };
      return {
        acquire: (rolloutId, callId, ttlMs, releasing) =>
          stubOf(rolloutId).acquire(callId, ttlMs, rolloutId, releasing),
        release: (rolloutId, callId) => stubOf(rolloutId).release(callId),
      };
    },
    feed: () => new ShardedFeed(layout(), feedShard),
    feedLayout: layout,
    feedShard,
    claims: (agent, shard) => named<ClaimQueueApi>(env.CLAIM_QUEUE, claimQueueName(agent, shard)),
    batch: (batchId) => named<BatchTrackerApi>(env.BATCH_TRACKER, batchId),
    catalog: () => named<BatchCatalogApi>(env.BATCH_CATALOG, CATALOG_OBJECT_NAME),
    onlineControl: () => named<OnlineControlApi>(env.ONLINE_CONTROL, ONLINE_CONTROL_OBJECT_NAME),
    onlineApp: (appId) => named<OnlineAppApi>(env.ONLINE_APP, appId),
  };
}
