/**
 * @module Every name a Durable Object is addressed by, and the one hash that picks a shard. A name
 * is an object's identity (`idFromName`): renaming one orphans the object and what it stores, and
 * changing the hash would move every rollout's admission, every offer and every group to another
 * object; so neither ever changes (test/unit/fnv1a.test.ts pins the hash). Objects of their own per
 * key are named by it: a rollout's session by the rollout id, a batch's tracker by the batch id.
 * Sharded objects: an admission shard `admission-<k>`, a claim-queue shard `<agent>#<k>`, a feed
 * shard `feed-<count>-<k>` (or FEED_OBJECT_NAME when there is one). The objects are reached by these
 * names only in src/runtime/objects/object-directory.ts; the feed's layout while its count changes
 * is src/runtime/feed/feed-shards.ts.
 */
import { fnv1a32 } from "../fnv1a";

/** The one PolicyStore: the policy is global to the deployment. */
export const POLICY_OBJECT_NAME = "default";

/** The one BatchCatalog. */
export const CATALOG_OBJECT_NAME = "default";

/** The one OnlineControl (applications and the serving split; never on the per-call path). */
export const ONLINE_CONTROL_OBJECT_NAME = "default";

/**
 * The single trainer feed (FEED_SHARDS unset or 1), and so the feed object that holds a
 * deployment's groups from before feed sharding. One feed serves every training mode: a trainer
 * pulls with `training_mode` to take only its own.
 */
export const FEED_OBJECT_NAME = "default";

/**
 * The shard of `key` among `shards` (FNV-1a of the key, modulo the count): one key always lands in
 * one shard, and keys spread evenly over all of them. Every sharded object picks its shard here.
 */
export function shardIndexOf(key: string, shards: number): number {
  return fnv1a32(key) % shards;
}

/** Admission shards when `ADMISSION_SHARDS` is unset: 16 × ~500 calls/s (two requests per call at ~1,000 req/s per object). */
export const DEFAULT_ADMISSION_SHARDS = 16;
/** Most admission shards a deployment may name: a weight sync fans out to every shard (well inside 1,000 subrequests per request). */
export const MAX_ADMISSION_SHARDS = 256;

/** The admission shard count from the `ADMISSION_SHARDS` variable: an integer 1..256, else the default. */
export function admissionShardCount(raw: string | undefined): number {
  const n = Number(raw);
  return Number.isInteger(n) && n >= 1 && n <= MAX_ADMISSION_SHARDS ? n : DEFAULT_ADMISSION_SHARDS;
}

/** The name of admission shard `index` (renaming would orphan its counts). */
export function admissionShardName(index: number): string {
  return `admission-${index}`;
}

/**
 * The admission shard of `rolloutId` under the `ADMISSION_SHARDS` variable's value (the Worker's
 * and the session's one rule): every call of one rollout counts in the same shard.
 */
export function admissionShardOf(rolloutId: string, configuredShards: string | undefined): number {
  return shardIndexOf(rolloutId, admissionShardCount(configuredShards));
}

/**
 * Shards per runner agent's claim queue. A Durable Object serves about 1,000 requests per second;
 * each attempt costs its shard about three (offer, take, settle) and an idle runner's poll one per
 * shard it visits, so eight shards leave room for about 2,600 attempts per second for one agent
 * name. Heartbeats, model calls and outcomes never touch the queue: they go to the rollout's own session.
 */
export const CLAIM_SHARDS = 8;

/** The claim shard a rollout is always offered on (so a re-offer replaces its earlier offer). */
export function claimShardOf(rolloutId: string): number {
  return shardIndexOf(rolloutId, CLAIM_SHARDS);
}

/** The Durable Object name of one shard of `agent`'s claim queue. */
export function claimQueueName(agent: string, shard: number): string {
  return `${agent}#${shard}`;
}

/** Every claim shard once, starting at a random one, so concurrent runners spread over the shards. */
export function claimShardVisitOrder(random: () => number = Math.random): number[] {
  const start = Math.floor(random() * CLAIM_SHARDS);
  return Array.from({ length: CLAIM_SHARDS }, (_, offset) => (start + offset) % CLAIM_SHARDS);
}

/** Most feed shards: at ~1,000 requests/s an object, 256 serve far beyond 100k concurrent rollouts. */
export const MAX_FEED_SHARDS = 256;

/** The name of feed shard `index` of `count`: the single feed keeps its historical name. */
export function feedShardName(index: number, count: number): string {
  return count === 1 ? FEED_OBJECT_NAME : `feed-${count}-${index}`;
}

/** The feed shard of group `uid` among `count`: every member of a group lands in one shard. */
export function feedShardIndex(uid: string, count: number): number {
  return shardIndexOf(uid, count);
}
