/**
 * Integration: the object directory addresses each Durable Object by the name it has always had.
 * A name is an object's identity, so a directory that named one differently would reach a new,
 * empty object and orphan the old one's storage (the policy, the catalog, the single feed).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { objects } from "../../../../src/runtime/objects/object-directory";
import { admissionShardOf } from "../../../../src/runtime/object-names";

/** The id a stub from the directory addresses (its type shows only the RPC methods). */
const idOf = (stub: unknown): DurableObjectId => (stub as DurableObjectStub).id;

describe("the object directory (integration)", () => {
  it("reaches the singletons, the shards and the per-id objects under their historical names", () => {
    const dir = objects(env);
    const rolloutId = "rollout-named-once";
    const pairs: Array<[unknown, DurableObjectId]> = [
      [dir.policy(), env.POLICY_STORE.idFromName("default")],
      [dir.catalog(), env.BATCH_CATALOG.idFromName("default")],
      [dir.feedShard(), env.TRAINER_FEED.idFromName("default")],
      [dir.feedShard("feed-4-2"), env.TRAINER_FEED.idFromName("feed-4-2")],
      [dir.session(rolloutId), env.ROLLOUT_SESSION.idFromName(rolloutId)],
      [dir.batch("batch-7"), env.BATCH_TRACKER.idFromName("batch-7")],
      [dir.claims("calc", 3), env.CLAIM_QUEUE.idFromName("calc#3")],
      [
        dir.shard(rolloutId),
        env.ADMISSION_SHARD.idFromName(
          `admission-${admissionShardOf(rolloutId, env.ADMISSION_SHARDS)}`,
        ),
      ],
    ];
    expect(pairs.map(([stub, id]) => idOf(stub).equals(id))).toEqual(pairs.map(() => true));
    expect(dir.shards().map((stub) => idOf(stub).toString())).toEqual(
      Array.from({ length: Number(env.ADMISSION_SHARDS) }, (_, k) =>
        env.ADMISSION_SHARD.idFromName(`admission-${k}`).toString(),
      ),
    );
  });
});
