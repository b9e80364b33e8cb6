/** Integration: a batch never has more than max_concurrent rollouts in flight, and cancel stops it. */
import { describe, expect, it } from "vitest";
import type { BatchProgress } from "../../../../src/schemas/batch";
import {
  batchRollouts,
  countsTotal,
  getBatch,
  postBatch,
  waitForBatch,
} from "../../../fixtures/datasets/batch-api";
import { api, getRollout, uniqueId, waitFor } from "../../../fixtures/rollouts";
import "../../../fixtures/test-agents";

/** Rows for the `test-loop` agent: unknown columns become the env's knobs (task.extra_args). */
function loopRows(count: number, knobs: { done_after: number | null; step_sleep_ms: number }) {
  return Array.from({ length: count }, (_, index) => ({
    prompt: `Turn-taking test ${index}.`,
    reward_model: { ground_truth: null },
    extra_info: { index },
    ...knobs,
  }));
}

describe("batch flow control", () => {
  // miniflare drives one work-queue batch at a time, so a short slice_ms lets never-ending
  // rollouts take turns instead of the first one holding the consumer for 30 s.
  it("keeps at most max_concurrent rollouts in flight and releases the rest as results come in", async () => {
    const batchId = uniqueId("bounded");
    const response = await postBatch({
      batch_id: batchId,
      agent: "test-loop",
      rows: loopRows(16, { done_after: 2, step_sleep_ms: 60 }),
      n: 1,
      max_concurrent: 4,
    });
    expect(response.status).toBe(202);
    const seen: BatchProgress[] = [];
    const final = await waitFor(
      "the bounded batch to finish",
      async () => {
        const progress = await getBatch(batchId);
        seen.push(progress);
        return progress.done ? progress : undefined;
      },
      40_000,
    );
    expect(Math.max(...seen.map((p) => p.in_flight))).toBe(4);
    for (const progress of seen) {
      expect(progress.in_flight).toBeLessThanOrEqual(4);
      expect(progress.released - progress.in_flight).toBe(
        progress.counts.succeeded + progress.counts.failed + progress.counts.cancelled,
      );
      expect(countsTotal(progress)).toBe(16);
    }
    expect(
      seen.some((p) => p.in_flight === 4 && p.counts.not_released > 0 && p.counts.succeeded > 0),
    ).toBe(true);
    expect(final).toMatchObject({
      released: 16,
      counts: { succeeded: 16 },
      termination_reasons: { ENV_DONE: 16 },
    });
  }, 45_000);

  it("cancels running rollouts and never creates unreleased ones", async () => {
    const batchId = uniqueId("cancelled");
    const body = {
      batch_id: batchId,
      agent: "test-loop",
      rows: loopRows(4, { done_after: null, step_sleep_ms: 50 }),
      n: 4,
      max_concurrent: 4,
      config: { max_steps: 1000, slice_ms: 200 },
    };
    expect((await postBatch(body)).status).toBe(202);
    await waitFor("rollouts to be running", async () => {
      const rollouts = await batchRollouts(batchId);
      const views = await Promise.all(rollouts.map((entry) => getRollout(entry.rollout_id)));
      return views.length === 4 && views.every((view) => view.trajectory.steps.length > 0)
        ? true
        : undefined;
    });
    const response = await api(`/v1/batches/${batchId}/cancel`, { method: "POST" });
    expect(response.status).toBe(200);
    const final = await waitForBatch(batchId);
    expect(final).toMatchObject({
      status: "cancelled",
      done: true,
      released: 4,
      in_flight: 0,
      counts: { cancelled: 16, not_released: 0, succeeded: 0 },
    });
    for (const entry of await batchRollouts(batchId)) {
      expect(entry).toMatchObject({ status: "cancelled", termination_reason: "CANCELLED" });
      expect((await getRollout(entry.rollout_id)).status).toBe("cancelled");
    }
    expect((await api(`/v1/rollouts/${batchId}:3:3`)).status).toBe(404);
    expect((await api(`/v1/batches/${batchId}/cancel`, { method: "POST" })).status).toBe(200);
  });
});
