/** Integration: a trainer reports what it measured of a batch, and the run view shows it beside the batch's own numbers. */
import { describe, expect, it } from "vitest";
import { calculatorRows, postBatch, waitForBatch } from "../../../fixtures/datasets/batch-api";
import { api, uniqueId } from "../../../fixtures/rollouts";
import { expectProblem } from "../../fixtures/feed-fixtures";
import "../../../fixtures/test-agents";

const report = {
  logprob_agreement: { max_abs: 1.2e-6, mean_abs: 3e-8, tokens: 512 },
  spanned_responses: 4,
  version_mismatches: 0,
  loss: -0.0123,
};
const put = (batchId: string, body: unknown) =>
  api(`/v1/batches/${batchId}/trainer-report`, { method: "PUT", body: JSON.stringify(body) });

describe("the trainer's report of a batch", () => {
  const series = uniqueId("trainer-report");
  const batchId = `${series}-0`;

  it("is kept and shown in the run view's step, replacing an earlier one", async () => {
    const rows = calculatorRows().slice(0, 2);
    expect(
      (await postBatch({ batch_id: batchId, series, agent: "calculator", rows, n: 2 })).status,
    ).toBe(202);
    await waitForBatch(batchId, 60_000);
    const view = async () =>
      (await (await api(`/v1/runs/${series}`)).json()) as {
        steps: Array<{ stats: { trainer: unknown } }>;
      };
    expect((await view()).steps[0]!.stats.trainer).toBeNull();
    expect((await put(batchId, { ...report, loss: 1 })).status).toBe(200);
    expect((await put(batchId, report)).status).toBe(200);
    expect((await view()).steps[0]!.stats.trainer).toEqual(report);
  }, 70_000);

  it("refuses a report naming the bad field, and a batch that does not exist", async () => {
    const bad = await expectProblem(
      await put(batchId, {
        ...report,
        logprob_agreement: { ...report.logprob_agreement, max_abs: -1 },
      }),
      422,
    );
    expect(JSON.stringify(bad)).toMatch(/logprob_agreement\.max_abs/);
    await expectProblem(await put(batchId, { ...report, extra: 1 }), 422);
    await expectProblem(await put(uniqueId("no-such-batch"), report), 404);
  });
});
