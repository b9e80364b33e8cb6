/** Integration: the session's alarm — stalled leases, max_stalls, rollout_timeout_ms and unclaimed rollouts. */
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  createByHand,
  expireLease,
  fakeCommit,
  patchState,
  readState,
} from "../../../fixtures/hand-session";
import { getRollout, uniqueId, waitFor, waitForEnd } from "../../../fixtures/rollouts";
import { holdReset } from "../../../fixtures/test-agents";

/** Runs the object's alarm now, as if its scheduled time had come. */
async function runWatchdog(rolloutId: string): Promise<void> {
  expect(
    await runDurableObjectAlarm(env.ROLLOUT_SESSION.get(env.ROLLOUT_SESSION.idFromName(rolloutId))),
  ).toBe(true);
}

describe("the watchdog", () => {
  it("counts a stall and drives the rollout again when a lease expires without progress", async () => {
    const rolloutId = uniqueId("stall");
    const session = await createByHand(rolloutId, { task: { extra_args: { done_after: 1 } } });
    expect((await session.lease("silent-driver")).ok).toBe(true);
    const stuck = holdReset(rolloutId);
    await expireLease(rolloutId);
    // The alarm drives the rollout in an invocation of its own and waits for it.
    const watchdog = runWatchdog(rolloutId);
    await waitFor("the new driver to lease it", async () => stuck.entered() || undefined);
    expect(await readState(rolloutId)).toMatchObject({
      stalls: 1,
      lease: { epoch: 2, driver_id: expect.stringMatching(/^driver-/) },
    });
    stuck.release();
    await watchdog;
    expect(await waitForEnd(rolloutId)).toMatchObject({
      status: "succeeded",
      termination_reason: "ENV_DONE",
    });
  });

  it("does not count a stall when the expired lease committed a step", async () => {
    const rolloutId = uniqueId("stall-progress");
    const session = await createByHand(rolloutId, { task: { extra_args: { done_after: 2 } } });
    const leased = await session.lease("slow-driver");
    expect(
      leased.ok && (await session.commitStep(leased.lease.lease_id, fakeCommit(rolloutId, 0))).ok,
    ).toBe(true);
    await expireLease(rolloutId);
    await runWatchdog(rolloutId);
    expect((await readState(rolloutId)).stalls).toBe(0);
    expect(await waitForEnd(rolloutId)).toMatchObject({ termination_reason: "ENV_DONE" });
  });

  it("ends the rollout TIMEOUT with an error after max_stalls leases without progress", async () => {
    const rolloutId = uniqueId("max-stalls");
    const session = await createByHand(rolloutId, {
      config: { max_stalls: 2 },
      task: { extra_args: { done_after: 1 } },
    });
    expect((await session.lease("silent-driver")).ok).toBe(true);
    const stuck = holdReset(rolloutId);
    try {
      await expireLease(rolloutId);
      const first = runWatchdog(rolloutId);
      // A second driver now holds the lease and makes no progress either: once its lease expires,
      // the alarm waiting for it gives up and sets the next alarm at once, which counts the second stall.
      await waitFor("the new driver to lease it", async () => stuck.entered() || undefined);
      await expireLease(rolloutId);
      await first;
      await waitForEnd(rolloutId);
    } finally {
      stuck.release();
    }
    const view = await getRollout(rolloutId);
    expect(view).toMatchObject({
      status: "failed",
      termination_reason: "TIMEOUT",
      error: "no step committed during 2 consecutive leases",
    });
    expect((await readState(rolloutId)).stalls).toBe(2);
  });

  it("keeps its hands off a live lease", async () => {
    const rolloutId = uniqueId("live-lease");
    const session = await createByHand(rolloutId);
    const leased = await session.lease("busy-driver");
    await runWatchdog(rolloutId);
    const state = await readState(rolloutId);
    expect(state).toMatchObject({ status: "running", stalls: 0 });
    expect(state.lease?.lease_id).toBe(leased.ok && leased.lease.lease_id);
  });

  it("ends a rollout past rollout_timeout_ms TIMEOUT when the alarm runs, even under a live lease", async () => {
    const rolloutId = uniqueId("deadline");
    const session = await createByHand(rolloutId, { config: { rollout_timeout_ms: 60_000 } });
    const leased = await session.lease("busy-driver");
    await patchState(rolloutId, (state) => ({ ...state, deadline: Date.now() - 1 }));
    await runWatchdog(rolloutId);
    expect(await getRollout(rolloutId)).toMatchObject({
      status: "failed",
      termination_reason: "TIMEOUT",
      error: "rollout_timeout_ms (60000) exceeded",
    });
    const late =
      leased.ok && (await session.commitStep(leased.lease.lease_id, fakeCommit(rolloutId, 0)));
    expect(late).toMatchObject({ ok: false, reason: "terminal" });
  });

  it("drives a rollout no driver picked up", async () => {
    const rolloutId = uniqueId("unclaimed");
    await createByHand(rolloutId, { task: { extra_args: { done_after: 1 } } });
    expect((await getRollout(rolloutId)).status).toBe("queued");
    await runWatchdog(rolloutId);
    expect(await waitForEnd(rolloutId)).toMatchObject({
      status: "succeeded",
      termination_reason: "ENV_DONE",
    });
  });

  it("leaves a finished rollout's outcome alone and only publishes it", async () => {
    const rolloutId = uniqueId("finished");
    const session = await createByHand(rolloutId);
    await session.cancel();
    // The publication is a write of its own (a new revision, unless the alarm the cancel set has
    // already run it); nothing else may change.
    const {
      publication: _publicationBefore,
      updated_at: _u1,
      revision: revisionBefore,
      ...before
    } = await readState(rolloutId);
    const stub = env.ROLLOUT_SESSION.get(env.ROLLOUT_SESSION.idFromName(rolloutId));
    await runDurableObjectAlarm(stub);
    // The alarm may also have fired on its own and still be publishing when this one finds none set:
    // wait for that publication (bounded), which is all it may do.
    const published = await waitFor("the publication", async () => {
      const state = await readState(rolloutId);
      return state.publication.status === "published" ? state : undefined;
    });
    const { publication, updated_at: _u2, revision, ...after } = published;
    expect(after).toEqual(before);
    expect(revision).toBeGreaterThanOrEqual(revisionBefore);
    expect(publication.status).toBe("published");
  });
});
