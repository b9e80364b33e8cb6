/** Integration: a batch of 16 calculator rows × 4 samples, fanned out, grouped, and submitted again. */
import { listDurableObjectIds } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import type { BatchProgress } from "../../../../src/schemas/batch";
import type { RolloutRecord } from "../../../../src/sink/publication/rollout-record";
import { rolloutRecordKey } from "../../../../src/sink/publication/r2-keys";
import {
  batchRollouts,
  calculatorRows,
  countsTotal,
  postBatch,
  waitForBatch,
} from "../../../fixtures/datasets/batch-api";
import { api, getRollout, uniqueId } from "../../../fixtures/rollouts";

const batchId = uniqueId("calc-batch");
const body = {
  batch_id: batchId,
  agent: "calculator",
  rows: calculatorRows(),
  n: 4,
  mode: "train",
};
let accepted: Record<string, unknown>;
let final: BatchProgress;

beforeAll(async () => {
  const response = await postBatch(body);
  accepted = (await response.json()) as Record<string, unknown>;
  expect(response.status).toBe(202);
  final = await waitForBatch(batchId, 50_000);
}, 60_000);

describe("a batch of 16 calculator rows × n=4", () => {
  it("answers 202 with rows × n rollouts and runs all 64 to a terminal state", () => {
    expect(accepted).toMatchObject({ batch_id: batchId, rollouts: 64, created: true });
    expect(final).toMatchObject({
      status: "completed",
      done: true,
      rows: 16,
      n: 4,
      rollouts: 64,
      released: 64,
      in_flight: 0,
    });
    expect(final.counts).toMatchObject({ not_released: 0, queued: 0, running: 0 });
    expect(countsTotal(final)).toBe(64);
    // The simulator injects no faults here: every rollout must succeed, not merely end.
    expect(final.counts).toMatchObject({ succeeded: 64, failed: 0, cancelled: 0 });
    expect(final.termination_reasons).toEqual({ ENV_DONE: 64 });
    expect(Object.values(final.termination_reasons).reduce((sum, count) => sum + count, 0)).toBe(
      64,
    );
  });

  it("pages the batch's rollouts with ?offset= and ?limit= in (row, sample) order", async () => {
    const page = async (query: string) =>
      (await (await api(`/v1/batches/${batchId}/rollouts?${query}`)).json()) as {
        offset: number;
        rollouts: Array<{ rollout_id: string; row_index: number; sample_index: number }>;
      };
    const middle = await page("offset=10&limit=5");
    expect(middle.offset).toBe(10);
    expect(middle.rollouts.map((entry) => entry.rollout_id)).toEqual(
      [10, 11, 12, 13, 14].map((i) => `${batchId}:${Math.floor(i / 4)}:${i % 4}`),
    );
    expect((await page("offset=60&limit=10")).rollouts.map((entry) => entry.sample_index)).toEqual([
      0, 1, 2, 3,
    ]);
    expect((await page("offset=64")).rollouts).toEqual([]);
    expect((await api(`/v1/batches/${batchId}/rollouts?offset=-1`)).status).toBe(400);
  });

  it("reports a reward mean in [0, 1] over the finished rollouts", () => {
    expect(final.reward.count).toBeGreaterThan(0);
    expect(final.reward.mean).toBeGreaterThanOrEqual(0);
    expect(final.reward.mean).toBeLessThanOrEqual(1);
  });

  it("puts each row's 4 samples in one group whose uid is <batch>:<row>, also in the stored samples", async () => {
    const rollouts = await batchRollouts(batchId);
    expect(rollouts).toHaveLength(64);
    for (let row = 0; row < 16; row++) {
      const group = rollouts.filter((entry) => entry.row_index === row);
      expect(group.map((entry) => entry.rollout_id)).toEqual(
        [0, 1, 2, 3].map((s) => `${batchId}:${row}:${s}`),
      );
      expect(new Set(group.map((entry) => entry.uid))).toEqual(new Set([`${batchId}:${row}`]));
    }
    for (const entry of rollouts.filter((e) => e.sample_index === 0 || e.row_index === 5)) {
      const record = (await (await env.TRAJECTORIES.get(
        rolloutRecordKey(entry.rollout_id),
      ))!.json()) as RolloutRecord;
      expect(
        record.samples.every(
          (sample) =>
            sample.uid === `${batchId}:${entry.row_index}` &&
            sample.sample_index === entry.sample_index,
        ),
      ).toBe(true);
    }
  });

  it("makes each rollout's task from its row: last user message, ground truth, index, whole chat", async () => {
    const view = await getRollout(`${batchId}:3:2`);
    expect(view.trajectory.task).toMatchObject({
      problem: "Use the calculator to compute 45 + 67 - 18.",
      ground_truth: "94",
      task_id: "3",
      prompt_id: "3",
      sample_id: 2,
      agent_name: "calculator",
    });
    expect((view.trajectory.task.extra_args.prompt as unknown[]).length).toBe(2);
  });

  it("creates nothing new when the same batch is submitted again", async () => {
    const sessionsBefore = (await listDurableObjectIds(env.ROLLOUT_SESSION)).length;
    const response = await postBatch(body);
    expect(response.status).toBe(200);
    const again = (await response.json()) as { created: boolean; progress: BatchProgress };
    expect(again.created).toBe(false);
    expect(again.progress).toMatchObject({
      counts: final.counts,
      reward: final.reward,
      released: 64,
      done: true,
    });
    expect((await listDurableObjectIds(env.ROLLOUT_SESSION)).length).toBe(sessionsBefore);
    expect((await waitForBatch(batchId)).counts).toEqual(final.counts);
  });

  it("refuses the same batch id with different content (409)", async () => {
    const response = await postBatch({ ...body, n: 2 });
    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({ errors: [{ path: "batch_id" }] });
  });
});
