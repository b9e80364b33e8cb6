/** Integration: the session's lease and commit rules, called over the Durable Object's RPC as a driver would. */
import { describe, expect, it } from "vitest";
import {
  countRows,
  createByHand,
  expireLease,
  fakeCommit,
  readState,
} from "../../../fixtures/hand-session";
import { getRollout, uniqueId } from "../../../fixtures/rollouts";
import "../../../fixtures/test-agents";

/** Leases `session` and fails the test if it cannot. */
async function leaseOf(session: Awaited<ReturnType<typeof createByHand>>, driverId: string) {
  const leased = await session.lease(driverId);
  if (!leased.ok) throw new Error(`lease refused: ${leased.reason}`);
  return leased.lease;
}

describe("commitStep", () => {
  it("stores a step committed twice once, answering duplicate the second time", async () => {
    const rolloutId = uniqueId("commit-twice");
    const session = await createByHand(rolloutId);
    const lease = await leaseOf(session, "driver-a");
    const first = await session.commitStep(lease.lease_id, fakeCommit(rolloutId, 0));
    const second = await session.commitStep(lease.lease_id, fakeCommit(rolloutId, 0));
    expect(first).toMatchObject({ ok: true, duplicate: false });
    expect(second).toMatchObject({ ok: true, duplicate: true });
    expect(await countRows(rolloutId, "steps")).toBe(1);
    expect(await countRows(rolloutId, "llm_calls")).toBe(1);
    expect(await readState(rolloutId)).toMatchObject({
      step_count: 1,
      llm_calls: 1,
      completion_tokens: 2,
    });
  });

  it("extends the lease on every commit", async () => {
    const rolloutId = uniqueId("commit-extends");
    const session = await createByHand(rolloutId, { config: { step_timeout_ms: 1_000 } });
    const lease = await leaseOf(session, "driver-a");
    await new Promise((resolve) => setTimeout(resolve, 20));
    const committed = await session.commitStep(lease.lease_id, fakeCommit(rolloutId, 0));
    expect(committed.ok && committed.lease.expires_at).toBeGreaterThan(lease.expires_at);
    expect(committed.ok && committed.lease.lease_id).toBe(lease.lease_id);
  });

  it("refuses a commit under a superseded lease with stale_lease", async () => {
    const rolloutId = uniqueId("commit-stale");
    const session = await createByHand(rolloutId);
    const old = await leaseOf(session, "driver-old");
    await expireLease(rolloutId);
    const current = await leaseOf(session, "driver-new");
    expect(current.epoch).toBe(old.epoch + 1);
    const refused = await session.commitStep(old.lease_id, fakeCommit(rolloutId, 0, "old"));
    expect(refused).toMatchObject({ ok: false, reason: "stale_lease" });
    expect(await countRows(rolloutId, "steps")).toBe(0);
    expect(
      await session.commitStep(current.lease_id, fakeCommit(rolloutId, 0, "new")),
    ).toMatchObject({ ok: true, duplicate: false });
    expect((await getRollout(rolloutId)).llm_calls.map((call) => call.call_id)).toEqual([
      `${rolloutId}/step/0/call/new`,
    ]);
  });

  it("refuses a step index that skips ahead with out_of_order", async () => {
    const rolloutId = uniqueId("commit-gap");
    const session = await createByHand(rolloutId);
    const lease = await leaseOf(session, "driver-a");
    expect(await session.commitStep(lease.lease_id, fakeCommit(rolloutId, 1))).toMatchObject({
      ok: false,
      reason: "out_of_order",
      message: "expected step 0, got 1",
    });
    expect(await session.commitStep(lease.lease_id, fakeCommit(rolloutId, 0))).toMatchObject({
      ok: true,
    });
    expect(await session.commitStep(lease.lease_id, fakeCommit(rolloutId, 2))).toMatchObject({
      ok: false,
      reason: "out_of_order",
    });
    expect(await countRows(rolloutId, "steps")).toBe(1);
  });

  it("refuses a step that does not validate with invalid, naming the field", async () => {
    const rolloutId = uniqueId("commit-invalid");
    const session = await createByHand(rolloutId);
    const lease = await leaseOf(session, "driver-a");
    const commit = fakeCommit(rolloutId, 0);
    commit.llm_calls[0]!.logprobs = [-0.5];
    expect(await session.commitStep(lease.lease_id, commit)).toMatchObject({
      ok: false,
      reason: "invalid",
      message: "logprobs: logprobs must have one entry per completion token",
    });
    expect(await countRows(rolloutId, "llm_calls")).toBe(0);
  });
});

describe("lease and finish", () => {
  it("refuses a second driver while the first lease is live", async () => {
    const rolloutId = uniqueId("lease-held");
    const session = await createByHand(rolloutId);
    await leaseOf(session, "driver-a");
    expect(await session.lease("driver-b")).toMatchObject({
      ok: false,
      reason: "held",
      status: "running",
    });
  });

  it("hands committed steps and calls to the next lease holder", async () => {
    const rolloutId = uniqueId("lease-resume");
    const session = await createByHand(rolloutId);
    const lease = await leaseOf(session, "driver-a");
    await session.commitStep(lease.lease_id, fakeCommit(rolloutId, 0));
    await expireLease(rolloutId);
    const next = await session.lease("driver-b");
    expect(next.ok && next.resume.steps.map(({ step }) => step.step_id)).toEqual([
      `${rolloutId}/step/0`,
    ]);
    expect(next.ok && next.resume.calls.map((call) => call.call_id)).toEqual([
      `${rolloutId}/step/0/call/a`,
    ]);
    expect(next.ok && next.resume.completion_tokens).toBe(2);
  });

  it("finishes only for the lease holder, and reports the outcome to a repeated finish", async () => {
    const rolloutId = uniqueId("finish");
    const session = await createByHand(rolloutId);
    const old = await leaseOf(session, "driver-old");
    await expireLease(rolloutId);
    const current = await leaseOf(session, "driver-new");
    const outcome = { termination_reason: "MAX_STEPS", reward: 0.5, error: null } as const;
    expect(await session.finish(old.lease_id, outcome)).toMatchObject({
      ok: false,
      reason: "stale_lease",
    });
    expect(await session.finish(current.lease_id, outcome)).toEqual({
      ok: true,
      already: false,
      status: "succeeded",
      termination_reason: "MAX_STEPS",
    });
    expect(
      await session.finish(current.lease_id, { ...outcome, termination_reason: "ENV_DONE" }),
    ).toMatchObject({ ok: true, already: true, termination_reason: "MAX_STEPS" });
    expect(await session.commitStep(current.lease_id, fakeCommit(rolloutId, 0))).toMatchObject({
      ok: false,
      reason: "terminal",
    });
    expect(await getRollout(rolloutId)).toMatchObject({ status: "succeeded", reward: 0.5 });
  });
});
