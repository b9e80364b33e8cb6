/**
 * Integration: every Durable Object class has each method of its interface on its prototype, where
 * workerd's RPC finds it, whether the class writes the method out or installs it from its table
 * (src/runtime/objects/install-surface.ts); an installed method answers over RPC and counts one
 * request to its name.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { AdmissionShard } from "../../../durable-objects/admission-shard";
import { BatchCatalog } from "../../../durable-objects/batch-catalog";
import { BatchTracker } from "../../../durable-objects/batch-tracker";
import { ClaimQueue } from "../../../durable-objects/claim-queue";
import { OnlineApp } from "../../../durable-objects/online-app";
import { OnlineControl } from "../../../durable-objects/online-control";
import { PolicyStore } from "../../../durable-objects/policy-store";
import { RolloutSession } from "../../../durable-objects/rollout-session";
import { TrainerFeed } from "../../../durable-objects/trainer-feed";
import { BATCH_TRACKER_METHODS } from "../../../src/runtime/batch/batch-tracker-api";
import { BATCH_CATALOG_METHODS } from "../../../src/runtime/catalog/batch-catalog-api";
import { CLAIM_QUEUE_METHODS } from "../../../src/runtime/claims/claim-queue-api";
import { TRAINER_FEED_METHODS } from "../../../src/runtime/feed/feed-api";
import { objects } from "../../../src/runtime/objects/object-directory";
import { ADMISSION_SHARD_METHODS } from "../../../src/runtime/policy/admission-shard-api";
import { POLICY_STORE_METHODS } from "../../../src/runtime/policy/policy-store-api";
import { ROLLOUT_SESSION_METHODS } from "../../../src/runtime/session";
import { ONLINE_APP_METHODS, ONLINE_CONTROL_METHODS } from "../../../src/runtime/online";
import { createByHand } from "../../fixtures/hand-session";
import { uniqueId } from "../../fixtures/rollouts";

/** Each Durable Object binding of the Worker, its class, and the methods its interface names. */
const SURFACES = [
  { binding: "ROLLOUT_SESSION", type: RolloutSession, methods: ROLLOUT_SESSION_METHODS },
  { binding: "POLICY_STORE", type: PolicyStore, methods: POLICY_STORE_METHODS },
  { binding: "ADMISSION_SHARD", type: AdmissionShard, methods: ADMISSION_SHARD_METHODS },
  { binding: "TRAINER_FEED", type: TrainerFeed, methods: TRAINER_FEED_METHODS },
  { binding: "BATCH_TRACKER", type: BatchTracker, methods: BATCH_TRACKER_METHODS },
  { binding: "BATCH_CATALOG", type: BatchCatalog, methods: BATCH_CATALOG_METHODS },
  { binding: "CLAIM_QUEUE", type: ClaimQueue, methods: CLAIM_QUEUE_METHODS },
  { binding: "ONLINE_CONTROL", type: OnlineControl, methods: ONLINE_CONTROL_METHODS },
  { binding: "ONLINE_APP", type: OnlineApp, methods: ONLINE_APP_METHODS },
];

describe("the RPC surface of each Durable Object (integration)", () => {
  it("names every Durable Object binding the Worker has", () => {
    const namespaces = Object.entries(env)
      .filter(
        ([, value]) => (value as object | null)?.constructor.name === "DurableObjectNamespace",
      )
      .map(([name]) => name);
    expect(SURFACES.map((surface) => surface.binding).sort()).toEqual(namespaces.sort());
  });

  it.each(SURFACES)(
    "$binding: has each method of its interface on its class's prototype",
    ({ type, methods }) => {
      const prototype = type.prototype as unknown as Record<string, unknown>;
      expect(methods.length).toBeGreaterThan(0);
      expect(
        methods.filter(
          (name) => !Object.hasOwn(prototype, name) || typeof prototype[name] !== "function",
        ),
      ).toEqual([]);
    },
  );

  it("answers an installed session method over RPC and counts it by name", async () => {
    const rolloutId = uniqueId("surface-session");
    const session = await createByHand(rolloutId);
    expect(await session.read()).toMatchObject({ rollout_id: rolloutId });
    expect(await session.attemptCalls(0)).toEqual([]);
    const usage = await session.usageCounts();
    expect(usage?.requests.by_method).toMatchObject({ read: 1, attemptCalls: 1 });
    expect(usage?.requests.by_method).not.toHaveProperty("usageCounts");
  });

  it("answers the policy's and a shard's installed methods over RPC and counts each by name", async () => {
    const policy = objects(env).policy();
    const fencesBefore = (await policy.requestCounts()).by_method.fence ?? 0;
    expect((await policy.fence()).generation).toBeGreaterThanOrEqual(0);
    expect((await policy.requestCounts()).by_method.fence).toBeGreaterThan(fencesBefore);
    const shard = objects(env).shard(uniqueId("surface-shard"));
    const inFlightBefore = (await shard.requestCounts()).by_method.inFlight ?? 0;
    expect(await shard.inFlight()).toBeGreaterThanOrEqual(0);
    expect((await shard.requestCounts()).by_method.inFlight).toBeGreaterThan(inFlightBefore);
  });

  it("answers a feed shard's and a batch's installed methods over RPC and counts each by name", async () => {
    const feed = objects(env).feedShard(uniqueId("surface-feed"));
    expect(await feed.holdsMany(["nobody"])).toEqual([false]);
    expect((await feed.requestCounts()).by_method).toEqual({ holdsMany: 1 });
    const batch = objects(env).batch(uniqueId("surface-batch"));
    expect(await batch.progress()).toBeUndefined();
    expect((await batch.requestCounts()).by_method).toEqual({ progress: 1 });
  });

  it("answers the uncounted objects' methods over RPC", async () => {
    const dir = objects(env);
    expect(await dir.catalog().get(uniqueId("surface-batch"))).toBeNull();
    expect(await dir.claims(uniqueId("surface-agent"), 0).size()).toEqual({
      waiting: 0,
      visible: 0,
    });
  });
});
