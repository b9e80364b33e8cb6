/**
 * Integration: admission around a weight sync, as the gateway (admission shards, by rollout id)
 * and the trainer (the PolicyStore's RPC) call it. Tests of this file run in order against the
 * one policy object; each ends with the policy restored and not syncing.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { PolicyState } from "../../../../src/runtime/policy/policy-state";
import { api } from "../../../fixtures/rollouts";
import {
  admission,
  policy,
  readPolicyState,
  restorePolicyState,
  sleep,
  uniqueCallId,
} from "../../fixtures/policy-fixtures";

let saved: PolicyState;
const acquired: string[] = [];

/** The rollout a test call belongs to: the call id's label, so calls spread over the shards. */
const rolloutOf = (callId: string) => `rollout-${callId}`;
const acquire = (callId: string, ttlMs = 60_000) =>
  admission().acquire(rolloutOf(callId), callId, ttlMs);
const release = (callId: string) => admission().release(rolloutOf(callId), callId);

/** Acquires a call that must be admitted; afterEach releases it if the test did not. */
async function admit(label: string, ttlMs = 60_000): Promise<string> {
  const callId = uniqueCallId(label);
  const admitted = await acquire(callId, ttlMs);
  if (!admitted.ok) throw new Error(`acquire refused: ${JSON.stringify(admitted)}`);
  acquired.push(callId);
  return callId;
}

beforeAll(async () => void (saved = await readPolicyState()));
afterEach(async () => {
  for (const callId of acquired.splice(0)) await release(callId);
  await restorePolicyState(saved);
});

describe("acquire and release", () => {
  it("counts admitted calls in flight until they are released, once per call id", async () => {
    const first = await admit("count-a");
    await admit("count-b");
    expect(await acquire(first)).toMatchObject({
      ok: true,
      policy_version: 0,
      sampling: { temperature: 1, top_p: 1 },
    });
    expect((await policy().snapshot()).in_flight).toBe(2);
    expect(await release(first)).toEqual({ policy_version: 0 });
    expect(await release(first)).toEqual({ policy_version: 0 });
    expect((await policy().snapshot()).in_flight).toBe(1);
  });

  it("does not count calls whose ttl passed without a release", async () => {
    await admit("expired", 30);
    await sleep(60);
    expect((await policy().snapshot()).in_flight).toBe(0);
  });
});

describe("weight sync", () => {
  it("refuses new calls with retry_after_s while syncing, but re-admits a call already in flight", async () => {
    const running = await admit("before-sync");
    expect(await policy().beginSync()).toEqual({ policy_version: 0, in_flight: 1, already: false });
    expect(await policy().beginSync()).toMatchObject({ already: true });
    expect(await acquire(uniqueCallId("during-sync"))).toEqual({
      ok: false,
      reason: "syncing",
      retry_after_s: 1,
      policy_version: 0,
    });
    expect(await acquire(running)).toMatchObject({ ok: true });
    expect((await policy().snapshot()).syncing).toMatchObject({ since: expect.any(Number) });
  });

  it("waitIdle resolves when the last in-flight call is released", async () => {
    const a = await admit("drain-a");
    const b = await admit("drain-b");
    await policy().beginSync();
    let settled = false;
    const waiting = policy()
      .waitIdle(10_000)
      .then((result) => ((settled = true), result));
    await release(a);
    await sleep(120);
    expect(settled).toBe(false);
    await release(b);
    // { in_flight: 0 } is the release's answer: giving up after 10 s would report b still in flight.
    expect(await waiting).toEqual({ in_flight: 0 });
  });

  it("waitIdle gives up after its timeout and reports what is still in flight", async () => {
    await admit("stuck");
    await policy().beginSync();
    const started = Date.now();
    expect(await policy().waitIdle(150)).toEqual({ in_flight: 1 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it("does not wait for calls whose ttl passed (an invocation that died)", async () => {
    await admit("died", 3_000);
    expect((await policy().beginSync()).in_flight).toBe(1);
    // Resolving with 0 before the 20 s timeout is the proof: the dead call stopped counting.
    expect(await policy().waitIdle(20_000)).toEqual({ in_flight: 0 });
  });

  it("ends with a newer version: calls are admitted again under it and releases report it", async () => {
    const spanning = await admit("spanning");
    await policy().beginSync(3);
    expect((await readPolicyState()).syncing).toMatchObject({ requested_version: 3 });
    expect(await policy().endSync(3)).toEqual({ ok: true, policy_version: 3, previous_version: 0 });
    expect(await acquire(await admit("after-sync"))).toMatchObject({ ok: true, policy_version: 3 });
    expect(await release(spanning)).toEqual({ policy_version: 3 });
    expect((await policy().snapshot()).syncing).toBeNull();
  });

  it("refuses to end with an equal or older version, or when no sync is under way", async () => {
    expect(await policy().endSync(5)).toEqual({
      ok: false,
      reason: "not_syncing",
      policy_version: 0,
    });
    await policy().beginSync();
    expect(await policy().endSync(2)).toMatchObject({ ok: true, policy_version: 2 });
    await policy().beginSync();
    expect(await policy().endSync(2)).toEqual({
      ok: false,
      reason: "version_not_newer",
      policy_version: 2,
    });
    expect(await policy().endSync(1)).toEqual({
      ok: false,
      reason: "version_not_newer",
      policy_version: 2,
    });
    // The refused ends left the sync under way (not null, not absent).
    expect((await policy().snapshot()).syncing).toMatchObject({ since: expect.any(Number) });
    expect(await policy().endSync(3)).toMatchObject({ ok: true, policy_version: 3 });
  });
});

describe("sync over HTTP", () => {
  const post = (path: string, body?: unknown) =>
    api(path, { method: "POST", body: body === undefined ? undefined : JSON.stringify(body) });

  it("begin waits up to wait_ms for calls to drain, and end answers 409 for a version not newer", async () => {
    const callId = await admit("http-drain");
    const begin = post("/v1/policy/sync/begin", { wait_ms: 10_000 });
    await sleep(100);
    await release(callId);
    const begun = await begin;
    expect(begun.status).toBe(200);
    expect(await begun.json()).toEqual({ policy_version: 0, syncing: true, in_flight: 0 });
    expect((await post("/v1/policy/sync/end", { policy_version: 0 })).status).toBe(409);
    const ended = await post("/v1/policy/sync/end", { policy_version: 1 });
    expect(await ended.json()).toEqual({ policy_version: 1, previous_version: 0, syncing: false });
  });

  it("abort ends a sync keeping its version, admits calls again, and answers 409 without a sync", async () => {
    expect((await post("/v1/policy/sync/abort")).status).toBe(409);
    expect((await post("/v1/policy/sync/begin")).status).toBe(200);
    expect((await acquire(uniqueCallId("while-syncing"))).ok).toBe(false);
    const aborted = await post("/v1/policy/sync/abort");
    expect(await aborted.json()).toEqual({ policy_version: 0, syncing: false });
    expect((await policy().snapshot()).syncing).toBeNull();
    await admit("after-abort");
    const [last] = (await policy().syncs(0, Date.now() + 1)).slice(-1);
    expect(last).toMatchObject({ policy_version: 0, previous_version: 0 });
  });

  it("begin without a body answers at once with the calls still in flight", async () => {
    await admit("http-nowait");
    const begun = await post("/v1/policy/sync/begin");
    expect(await begun.json()).toEqual({ policy_version: 0, syncing: true, in_flight: 1 });
    expect((await post("/v1/policy/sync/begin", { wait_ms: 600_001 })).status).toBe(422);
  });
});
