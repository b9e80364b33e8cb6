/**
 * Integration: the weight-sync fence over the admission shards. Calls of many rollouts (spread
 * over all shards) race `beginSync`; whatever the interleaving, every call admitted under the old
 * version is counted until released, no call is admitted after `beginSync` answered, and the
 * policy object itself serves no request per model call.
 */
import type { AdmissionShardRpc } from "../../../../src/runtime/objects/object-directory";
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { PolicyState } from "../../../../src/runtime/policy/policy-state";
import {
  admission,
  policy,
  readPolicyState,
  restorePolicyState,
  sleep,
  uniqueCallId,
} from "../../fixtures/policy-fixtures";

let saved: PolicyState;
beforeAll(async () => void (saved = await readPolicyState()));
afterEach(async () => restorePolicyState(saved));

/** `n` distinct calls, each of its own rollout (so they hash to every shard). */
const calls = (label: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({
    rolloutId: `fence-${label}-${i}-${uniqueCallId("r")}`,
    callId: uniqueCallId(`${label}-${i}`),
  }));
type Call = ReturnType<typeof calls>[number];
const acquire = (call: Call) => admission().acquire(call.rolloutId, call.callId, 60_000);
const release = (call: Call) => admission().release(call.rolloutId, call.callId);

describe("the admission fence under racing calls", () => {
  it("counts exactly the calls admitted before beginSync answered and admits none after", async () => {
    const before = calls("before", 60);
    const during = calls("during", 60);
    const racing = before.map(acquire);
    const begin = policy().beginSync();
    racing.push(...during.map(acquire));
    const [begun, ...outcomes] = await Promise.all([begin, ...racing]);
    const admitted = [...before, ...during].filter((_, i) => outcomes[i]!.ok);
    expect(outcomes.every((outcome) => outcome.policy_version === 0)).toBe(true);
    // Nothing was released, so the shards' total at the fence is every call they admitted.
    expect(begun.in_flight).toBe(admitted.length);
    const after = await Promise.all(calls("after", 40).map(acquire));
    expect(after.filter((outcome) => outcome.ok)).toEqual([]);
    expect((await policy().snapshot()).in_flight).toBe(admitted.length);
    await Promise.all(admitted.map(release));
    expect(await policy().waitIdle(5_000)).toEqual({ in_flight: 0 });
  });

  it("lets sync/begin's wait end only after the last old-version call is released", async () => {
    const racing = calls("drain", 30);
    const outcomes = await Promise.all([...racing.map(acquire), policy().beginSync()]);
    const admitted = racing.filter((_, i) => (outcomes[i] as { ok: boolean }).ok);
    const events: string[] = [];
    const idle = policy()
      .waitIdle(20_000)
      .then((result) => (events.push("idle"), result));
    for (const call of admitted) {
      await sleep(5);
      await release(call);
      events.push("released");
    }
    expect(await idle).toEqual({ in_flight: 0 });
    expect(events.lastIndexOf("released")).toBeLessThan(events.indexOf("idle"));
    expect(events.filter((e) => e === "released")).toHaveLength(admitted.length);
  });

  it("serves model calls without a request to the policy object, and a new version reaches every shard at sync/end", async () => {
    await policy().fence(); // wakes the object, so its counter covers the whole test
    const start = (await policy().requestCounts()).by_method;
    const batch = calls("hot", 48);
    for (const outcome of await Promise.all(batch.map(acquire))) expect(outcome.ok).toBe(true);
    await Promise.all(batch.map(release));
    const end = (await policy().requestCounts()).by_method;
    // Shards that had never seen a fence ask once (fence); nothing else reaches the policy.
    const delta = Object.fromEntries(
      Object.keys(end)
        .map((method) => [method, end[method]! - (start[method] ?? 0)])
        .filter(([, n]) => n !== 0),
    );
    // pressureShare: a batch tracker's alarm (every 5 s, per batch, never per call) may land here.
    expect(
      Object.keys(delta).filter(
        (method) => !["fence", "requestCounts", "pressureShare"].includes(method),
      ),
    ).toEqual([]);
    await policy().beginSync();
    await policy().endSync(saved.policy_version + 7);
    const next = await Promise.all(calls("next", 32).map(acquire));
    expect(next.map((outcome) => outcome.ok && outcome.policy_version)).toEqual(
      next.map(() => saved.policy_version + 7),
    );
  });

  it("releases the ended calls an admission carries even when it refuses the new call, so a sync's wait ends", async () => {
    // One rollout's calls, as a drive sends them: the next admission carries the last call's release.
    const rolloutId = `fence-carried-${uniqueCallId("r")}`;
    const ended = uniqueCallId("ended");
    expect(await admission().acquire(rolloutId, ended, 60_000)).toMatchObject({ ok: true });
    const begun = await policy().beginSync();
    expect(begun.in_flight).toBeGreaterThanOrEqual(1);
    const refused = await admission().acquire(rolloutId, uniqueCallId("next"), 60_000, [ended]);
    expect(refused).toMatchObject({ ok: false, reason: "syncing" });
    // The sync now waits for one call less (earlier tests here leave calls of their own counted).
    expect((await policy().snapshot()).in_flight).toBe(begun.in_flight - 1);
  });

  it("asks the policy object for its fence once per shard that lacks one, however many calls arrive at once", async () => {
    // A shard no sync ever pushed to: every one of these concurrent calls needs its fence.
    const namespace = env.ADMISSION_SHARD;
    const fresh = namespace.get(
      namespace.idFromName(`fresh-${uniqueCallId("shard")}`),
    ) as unknown as AdmissionShardRpc;
    await policy().fence(); // wakes the object, so its counter covers the whole test
    const before = (await policy().requestCounts()).by_method.fence ?? 0;
    const outcomes = await Promise.all(
      Array.from({ length: 24 }, (_, i) => fresh.acquire(uniqueCallId(`fresh-${i}`), 60_000)),
    );
    expect(outcomes.every((outcome) => outcome.ok)).toBe(true);
    expect(((await policy().requestCounts()).by_method.fence ?? 0) - before).toBe(1);
    expect(await fresh.inFlight()).toBe(24);
  });
});
