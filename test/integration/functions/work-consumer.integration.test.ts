/** Integration: the ROLLOUT_WORK queue handler of the Worker, called with hand-made batches. */
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import worker from "../../../functions/worker";
import { createByHand, patchState, sessionOf } from "../../fixtures/hand-session";
import {
  api,
  getRollout,
  startRollout,
  uniqueId,
  waitFor,
  waitForEnd,
} from "../../fixtures/rollouts";
import "../../fixtures/test-agents";

/** Delivers `bodies` to the Worker's queue handler as one batch and returns what it acked and retried. */
async function deliver(bodies: unknown[], queue = "edge-rollout-work") {
  const batch = createMessageBatch(
    queue,
    bodies.map((body, i) => ({ id: `msg-${i}`, timestamp: new Date(), attempts: 1, body })),
  );
  await worker.queue(batch as MessageBatch<unknown>, env);
  return getQueueResult(batch, createExecutionContext());
}

const work = (rolloutId: string) => ({
  rollout_id: rolloutId,
  reason: "created",
  sent_at: Date.now(),
});

describe("the work queue consumer", () => {
  let errorLog: MockInstance<typeof console.error>;
  beforeEach(
    () => void (errorLog = vi.spyOn(console, "error").mockImplementation(() => undefined)),
  );
  afterEach(() => vi.restoreAllMocks());

  it("acks a malformed message instead of retrying it, and logs it", async () => {
    const result = await deliver([{ rollout: "missing fields" }]);
    expect(result.explicitAcks).toEqual(["msg-0"]);
    expect(result.retryMessages).toEqual([]);
    expect(result.retryBatch.retry).toBe(false);
    expect(errorLog).toHaveBeenCalledWith(
      "dropping malformed work message",
      expect.objectContaining({ id: "msg-0" }),
    );
  });

  it("acks a message whose reason is unknown", async () => {
    const result = await deliver([{ ...work(uniqueId("odd-reason")), reason: "because" }]);
    expect(result.explicitAcks).toEqual(["msg-0"]);
    expect(result.retryMessages).toEqual([]);
  });

  it("acks a message for a rollout that does not exist", async () => {
    const result = await deliver([work(uniqueId("ghost"))]);
    expect(result.explicitAcks).toEqual(["msg-0"]);
    expect(result.retryMessages).toEqual([]);
  });

  it("acks at once and the session's alarm drives the rollout to its end in its own invocation", async () => {
    const rolloutId = uniqueId("consume");
    await createByHand(rolloutId, { task: { extra_args: { done_after: 2 } } });
    const result = await deliver([work(rolloutId)]);
    expect(result.explicitAcks).toEqual(["msg-0"]);
    const view = await waitForEnd(rolloutId);
    expect(view).toMatchObject({ status: "succeeded", termination_reason: "ENV_DONE" });
    expect(view.trajectory.steps).toHaveLength(2);
  });

  it("ends AGENT_ERROR for a rollout whose agent this deployment does not have", async () => {
    const rolloutId = uniqueId("unknown-agent");
    await createByHand(rolloutId, { agent: "retired-agent" });
    expect((await deliver([work(rolloutId)])).explicitAcks).toEqual(["msg-0"]);
    expect(await waitForEnd(rolloutId)).toMatchObject({
      status: "failed",
      termination_reason: "AGENT_ERROR",
      error: 'agent "retired-agent" is not registered in this deployment',
    });
  });

  it("ends TIMEOUT for a rollout whose deadline passed before a driver could lease it", async () => {
    const rolloutId = uniqueId("late");
    await createByHand(rolloutId);
    await patchState(rolloutId, (state) => ({ ...state, deadline: Date.now() - 1 }));
    expect((await deliver([work(rolloutId)])).explicitAcks).toEqual(["msg-0"]);
    const view = await waitForEnd(rolloutId);
    expect(view).toMatchObject({
      status: "failed",
      termination_reason: "TIMEOUT",
      error: expect.stringMatching(/^rollout_timeout_ms/),
    });
    expect(view.llm_calls).toHaveLength(0);
  });

  it("acks a duplicate message for a rollout that already ended, leaving it unchanged", async () => {
    const rolloutId = uniqueId("duplicate");
    await createByHand(rolloutId, { task: { extra_args: { done_after: 1 } } });
    await deliver([work(rolloutId)]);
    await waitForEnd(rolloutId);
    // Publication to R2 runs from the alarm after the end and stamps updated_at; let it finish first.
    const before = await waitFor("publication", async () => {
      const view = await getRollout(rolloutId);
      return view.publication.status === "published" ? view : undefined;
    });
    const result = await deliver([work(rolloutId), work(rolloutId)]);
    expect(result.explicitAcks).toEqual(["msg-0", "msg-1"]);
    expect(await getRollout(rolloutId)).toEqual(before);
  });

  it("drives every rollout of a batch, mixed with a malformed message", async () => {
    const ids = [uniqueId("batch-a"), uniqueId("batch-b")];
    for (const id of ids) await createByHand(id, { task: { extra_args: { done_after: 1 } } });
    const result = await deliver([work(ids[0]!), 42, work(ids[1]!)]);
    expect([...result.explicitAcks].sort()).toEqual(["msg-0", "msg-1", "msg-2"]);
    for (const id of ids) expect((await waitForEnd(id)).termination_reason).toBe("ENV_DONE");
  });
});

/** The requests a rollout's session served, by method. */
async function servedBy(rolloutId: string): Promise<Record<string, number>> {
  return (await sessionOf(rolloutId).usageCounts())!.requests.by_method;
}

describe("a driven rollout created over HTTP", () => {
  it("is driven from its session's own alarm, with no work message: the session serves no requestDrive", async () => {
    const rolloutId = await startRollout({
      agent: "test-loop",
      task: { problem: "Say hello.", extra_args: { done_after: 2 } },
    });
    expect(await waitForEnd(rolloutId)).toMatchObject({ status: "succeeded" });
    const counts = await servedBy(rolloutId);
    expect(counts.requestDrive).toBeUndefined();
    expect(counts).toMatchObject({ create: 1, lease: 1, finish: 1 });
    expect(counts.alarm).toBeGreaterThanOrEqual(1);
  });

  it("and a fork of it: the child is driven from its own alarm too", async () => {
    const parentId = await startRollout({
      agent: "test-loop",
      task: { problem: "Count the turns.", extra_args: {} },
      config: { max_steps: 2 },
    });
    await waitForEnd(parentId);
    const forked = await api(`/v1/rollouts/${parentId}/fork`, {
      method: "POST",
      body: JSON.stringify({ at_step: 1, n: 1, config: { max_steps: 3 } }),
    });
    expect(forked.status).toBe(202);
    const { children } = (await forked.json()) as { children: Array<{ rollout_id: string }> };
    const child = children[0]!.rollout_id;
    expect(await waitForEnd(child)).toMatchObject({ status: "succeeded" });
    const counts = await servedBy(child);
    expect(counts.requestDrive).toBeUndefined();
    expect(counts).toMatchObject({ createFork: 1, lease: 1, finish: 1 });
  });
});
