/**
 * @module What the policy object pushes to its admission shards: the policy snapshot, whether a
 * weight sync is under way, and a generation that orders the pushes.
 */
import { z } from "zod";
import { fnv1a32 } from "../../fnv1a";
import { PolicySnapshot } from "../../schemas/policy";

/**
 * The policy as one admission shard enforces it. `generation` grows with every change the policy
 * object makes, so a shard keeps the newest fence whatever order pushes and fetches arrive in.
 */
export const AdmissionFence = z
  .object({
    generation: z.int().min(0),
    snapshot: PolicySnapshot,
    syncing: z.boolean(),
    /** The sync under way is an `interrupt` sync: the shard tells the sessions of its calls in flight to cut them. */
    interrupt: z.boolean().default(false),
    /**
     * The latest version of each named resource (`PUT /v1/resources/:name`), so a shard answers
     * "the latest" exactly and reads a version's value from the policy object once (versions never
     * change). A fence stored before this field reads as none, so the shard asks for a new one.
     */
    resources: z.record(z.string(), z.int().min(1)).optional(),
  })
  .strict();
export type AdmissionFence = z.infer<typeof AdmissionFence>;

/** Shards when `ADMISSION_SHARDS` is unset: 16 × ~500 calls/s (two requests per call at ~1,000 req/s per object). */
export const DEFAULT_ADMISSION_SHARDS = 16;
/** Most shards a deployment may name: a weight sync fans out to every shard (well inside 1,000 subrequests per request). */
export const MAX_ADMISSION_SHARDS = 256;

/** The shard count from the `ADMISSION_SHARDS` variable: an integer 1..256, else the default. */
export function admissionShardCount(raw: string | undefined): number {
  const n = Number(raw);
  return Number.isInteger(n) && n >= 1 && n <= MAX_ADMISSION_SHARDS ? n : DEFAULT_ADMISSION_SHARDS;
}

/** The name of shard `index` (Durable Object names are stable: renaming would orphan counts). */
export function shardName(index: number): string {
  return `admission-${index}`;
}

/**
 * The shard that admits `rolloutId`'s calls (FNV-1a of the id, modulo `shards`): every call of one
 * rollout counts in the same shard, and rollouts spread evenly over all of them.
 */
export function shardIndexOf(rolloutId: string, shards: number): number {
  return fnv1a32(rolloutId) % shards;
}

/** The shard index of `rolloutId` under the `ADMISSION_SHARDS` variable's value (the Worker's and the session's one rule). */
export function shardIndexFor(rolloutId: string, configuredShards: string | undefined): number {
  return shardIndexOf(rolloutId, admissionShardCount(configuredShards));
}
