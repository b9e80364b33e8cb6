/** Integration: the batch catalog, filtered and paginated batch rollouts, the reward summary and the eval report. */
import { describe, expect, it } from "vitest";
import type {
  BatchSummary,
  RolloutListEntry,
  RolloutListPage,
} from "../../../../src/schemas/batch-listing";
import type { EvalReport } from "../../../../src/schemas/eval-report";
import { calculatorRows, postBatch, waitForBatch } from "../../../fixtures/datasets/batch-api";
import { api, uniqueId } from "../../../fixtures/rollouts";
import "../../../fixtures/test-agents";

async function json<T>(path: string): Promise<T> {
  const response = await api(path);
  if (response.status !== 200)
    throw new Error(`GET ${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

const page = (batchId: string, query: string) =>
  json<RolloutListPage>(`/v1/batches/${batchId}/rollouts?${query}`);

describe("listing a finished calculator batch", () => {
  const batchId = uniqueId("listing-run-0001");
  const rows = calculatorRows()
    .slice(0, 6)
    .map((row, i) => ({ ...row, data_source: i < 2 ? "alpha" : "beta" }));
  let all: RolloutListEntry[];

  it("runs the batch and lists every rollout with its agent and data source", async () => {
    expect(
      (await postBatch({ batch_id: batchId, agent: "calculator", rows, n: 3, mode: "val" })).status,
    ).toBe(202);
    const progress = await waitForBatch(batchId, 60_000);
    const listed = await page(batchId, "limit=1000");
    all = listed.rollouts;
    expect(listed.total).toBe(18);
    expect(all.map((r) => r.rollout_id)).toEqual(
      Array.from({ length: 18 }, (_, i) => `${batchId}:${Math.floor(i / 3)}:${i % 3}`),
    );
    expect(all.filter((r) => r.status === "succeeded")).toHaveLength(progress.counts.succeeded);
    expect(new Set(all.map((r) => r.agent))).toEqual(new Set(["calculator"]));
    expect(all.filter((r) => r.data_source === "alpha")).toHaveLength(6);
  }, 70_000);

  it("pages on the server and filters by status, reason, data source and reward", async () => {
    const second = await page(batchId, "offset=5&limit=4");
    expect(second).toMatchObject({ total: 18, offset: 5, limit: 4 });
    expect(second.rollouts.map((r) => r.rollout_id)).toEqual(
      all.slice(5, 9).map((r) => r.rollout_id),
    );
    const passing = await page(batchId, "reward_min=1");
    expect(passing.total).toBe(all.filter((r) => (r.reward ?? -1) >= 1).length);
    const failing = await page(batchId, "reward_max=0.5&data_source=beta");
    expect(failing.rollouts.every((r) => r.data_source === "beta" && (r.reward ?? 0) <= 0.5)).toBe(
      true,
    );
    expect(failing.total).toBe(
      all.filter((r) => r.data_source === "beta" && r.reward !== null && r.reward <= 0.5).length,
    );
    expect((await page(batchId, "reason=ENV_DONE&status=succeeded")).total).toBe(
      all.filter((r) => r.termination_reason === "ENV_DONE" && r.status === "succeeded").length,
    );
    expect((await page(batchId, "agent=math")).total).toBe(0);
  });

  it("refuses a bad filter with 400 naming the parameter", async () => {
    const response = await api(`/v1/batches/${batchId}/rollouts?status=bogus&limit=0`);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { errors: Array<{ path: string }> };
    expect(body.errors.map((e) => e.path).sort()).toEqual(["limit", "status"]);
  });

  it("summarises rewards by value and data source, and reports pass@k from the same rollouts", async () => {
    const summary = await json<BatchSummary>(`/v1/batches/${batchId}/summary`);
    const rewarded = all.filter((r) => r.reward !== null);
    expect(summary.histogram.bins.reduce((sum, b) => sum + b.count, 0)).toBe(rewarded.length);
    expect(summary.by_data_source.map((g) => [g.key, g.finished])).toEqual([
      ["alpha", 6],
      ["beta", 12],
    ]);
    const report = await json<EvalReport>(`/v1/batches/${batchId}/eval?k=2`);
    const perRow = Array.from(
      { length: 6 },
      (_, row) => all.filter((r) => r.row_index === row && (r.reward ?? 0) >= 1).length / 3,
    );
    expect(report).toMatchObject({ n: 3, k: 2, done: true, total: { rows: 6, samples: 18 } });
    expect(report.total.pass_at_1).toBeCloseTo(perRow.reduce((a, b) => a + b, 0) / 6, 10);
    expect(report.by_data_source.map((d) => d.data_source)).toEqual(["alpha", "beta"]);
    const notPassing = all.filter((r) => (r.reward ?? 0) < 1).length;
    expect(Object.values(report.failures).reduce((a, b) => a + b, 0)).toBe(notPassing);
  });

  it("lists the batch in the catalog, newest first, with its series and progress", async () => {
    const listed = await json<{
      batches: Array<{ batch_id: string; series: string; progress: { done: boolean } | null }>;
    }>(`/v1/batches?series=${encodeURIComponent(batchId.replace(/\d+$/, ""))}`);
    expect(listed.batches.map((b) => b.batch_id)).toEqual([batchId]);
    expect(listed.batches[0]).toMatchObject({
      series: batchId.replace(/\d+$/, ""),
      progress: { done: true },
    });
  });
});

describe("listing slots not released yet", () => {
  it("lists rows × n slots with include_unreleased, and unreleased ones as cancelled after a cancel", async () => {
    const batchId = uniqueId("unreleased");
    const rows = Array.from({ length: 5 }, (_, index) => ({
      prompt: `Loop ${index}.`,
      reward_model: { ground_truth: null },
      extra_info: { index },
      done_after: null,
      step_sleep_ms: 50,
    }));
    expect(
      (
        await postBatch({
          batch_id: batchId,
          agent: "test-loop",
          rows,
          n: 2,
          max_concurrent: 1,
          config: { max_steps: 1000, slice_ms: 200 },
        })
      ).status,
    ).toBe(202);
    const slots = await page(batchId, "include_unreleased=true&limit=1000");
    expect(slots.total).toBe(10);
    expect(slots.rollouts.filter((r) => r.status === "not_released")).toHaveLength(9);
    expect(
      (await page(batchId, "include_unreleased=true&status=not_released&offset=7")).rollouts.map(
        (r) => r.rollout_id,
      ),
    ).toEqual([`${batchId}:4:0`, `${batchId}:4:1`]);
    expect((await page(batchId, "")).total).toBe(1);
    expect((await api(`/v1/batches/${batchId}/cancel`, { method: "POST" })).status).toBe(200);
    const after = await page(batchId, "include_unreleased=true&status=cancelled");
    expect(after.total).toBe(10);
  }, 30_000);
});
