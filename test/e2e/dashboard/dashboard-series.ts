/** @module The run page of a 3-step series, the group page and the val batch's eval report. */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { expect, it } from "vitest";
import { screenshotPath } from "../../fixtures/browser";
import { root, TOKEN, run, text, type Progress, type DashboardContext } from "./dashboard-fixtures";

/** `PUT` with the admin token; throws with the answer unless it is 2xx. */
async function put(origin: string, path: string, body: unknown): Promise<void> {
  const response = await fetch(`${origin}${path}`, {
    method: "PUT",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!response.ok)
    throw new Error(`PUT ${path} answered ${response.status}: ${await response.text()}`);
}

/** Registers these tests; `ctx` is filled by the file's beforeAll before any runs. */
export function seriesPages(ctx: DashboardContext): void {
  it("run page lists every batch of the 3-step series in step order with the API's numbers, charts linking each batch", async () => {
    const { stack, api, page, series, train, val } = ctx;
    interface Step {
      step: number;
      batch_id: string;
      progress: Progress & { rollouts: number };
      stats: {
        reward: { std: number; min: number; max: number };
        response_tokens: { mean: number; p90: number; count: number };
        groups: { complete: number; no_signal: number };
        rollouts_per_s: number;
      };
      weight_syncs: { count: number; wait_ms: number };
    }
    // A weight sync after the last step began: it counts for that step, with the time calls were refused.
    const { policy_version } = await api.post<{ policy_version: number }>(
      "/v1/policy/sync/begin",
      {},
    );
    await new Promise((r) => setTimeout(r, 300));
    await api.post("/v1/policy/sync/end", { policy_version: policy_version + 1 });
    const view = await api.get<{ series: string; steps: Step[] }>(`/v1/runs/${series}`);
    expect(view.steps.map((s) => [s.step, s.batch_id])).toEqual(train.map((id, i) => [i + 1, id]));
    expect(view.steps.map((s) => s.weight_syncs.count)).toEqual([0, 0, 1]);
    expect(view.steps[2]!.weight_syncs.wait_ms).toBeGreaterThanOrEqual(300);
    for (const step of view.steps) {
      // The API's spread and no-signal counts are those of the batch's own rollout listing.
      const listed = await api.get<{
        rollouts: Array<{ row_index: number; reward: number | null }>;
      }>(`/v1/batches/${step.batch_id}/rollouts?limit=100`);
      const rewards = listed.rollouts.flatMap((r) => (r.reward === null ? [] : [r.reward]));
      const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
      expect(step.progress.reward.mean).toBeCloseTo(mean, 9);
      expect(step.stats.reward.std).toBeCloseTo(
        Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / rewards.length),
        9,
      );
      const byRow = new Map<number, Set<number>>();
      for (const r of listed.rollouts)
        byRow.set(r.row_index, (byRow.get(r.row_index) ?? new Set()).add(r.reward ?? 0));
      expect(step.stats.groups.no_signal).toBe(
        [...byRow.values()].filter((g) => g.size === 1).length,
      );
      expect(step.stats.response_tokens.count).toBe(listed.rollouts.length);
    }
    // What a trainer measured of steps 1 and 3 (step 2 reports nothing): shown beside the batch's numbers.
    const reports = [1.5e-6, null, 4.25e-5].map((max_abs, i) =>
      max_abs === null
        ? null
        : {
            logprob_agreement: { max_abs, mean_abs: max_abs / 10, tokens: 100 + i },
            spanned_responses: 2 * i,
            version_mismatches: 0,
            loss: null,
          },
    );
    for (const [i, report] of reports.entries())
      if (report)
        await put(
          stack.workerUrl,
          `/v1/batches/${encodeURIComponent(train[i]!)}/trainer-report`,
          report,
        );
    await page.goto(`${stack.workerUrl}/runs/${series}`);
    for (const [i, report] of reports.entries()) {
      const row = `#steps tr[data-batch-id="${train[i]}"]`;
      expect(await text(page, `${row} [data-field="logprob-agreement"]`)).toBe(
        report ? report.logprob_agreement.max_abs.toExponential(2) : "–",
      );
      expect(await text(page, `${row} [data-field="version-spans"]`)).toBe(
        report ? `${report.spanned_responses} / 0` : "–",
      );
    }
    expect(
      await page
        .locator("#chart-logprob-agreement circle.point")
        .evaluateAll((els) =>
          els.map((el) => [el.getAttribute("data-label"), Number(el.getAttribute("data-value"))]),
        ),
    ).toEqual([
      ["step 1", 1.5e-6],
      ["step 3", 4.25e-5],
    ]);
    expect(
      await page
        .locator("#steps tr[data-batch-id]")
        .evaluateAll((els) => els.map((el) => el.getAttribute("data-batch-id"))),
    ).toEqual(train);
    for (const step of view.steps) {
      const row = `#steps tr[data-batch-id="${step.batch_id}"]`;
      expect(Number(await text(page, `${row} [data-field="reward-mean"]`))).toBeCloseTo(
        step.progress.reward.mean!,
        4,
      );
      expect(Number(await text(page, `${row} [data-field="reward-std"]`))).toBeCloseTo(
        step.stats.reward.std,
        4,
      );
      expect(Number(await text(page, `${row} [data-field="length-mean"]`))).toBeCloseTo(
        step.stats.response_tokens.mean,
        1,
      );
      expect(await text(page, `${row} [data-field="length-p90"]`)).toBe(
        String(step.stats.response_tokens.p90),
      );
      expect(await text(page, `${row} [data-field="rollouts"]`)).toBe(
        String(step.progress.rollouts),
      );
      expect(await text(page, `${row} [data-field="no-signal"]`)).toBe(
        `${((100 * step.stats.groups.no_signal) / step.stats.groups.complete).toFixed(1)}%`,
      );
      for (const [reason, count] of Object.entries(step.progress.termination_reasons))
        expect(await text(page, `${row} [data-field="reasons"]`)).toContain(`${reason} ${count}`);
      expect(await text(page, `${row} [data-field="syncs"]`)).toBe(String(step.weight_syncs.count));
      expect(await text(page, `${row} [data-field="sync-wait-ms"]`)).toBe(
        String(step.weight_syncs.wait_ms),
      );
    }
    const points = await page
      .locator("#chart-reward-mean circle.point")
      .evaluateAll((els) =>
        els.map((el) => [
          el.getAttribute("data-label"),
          Number(el.getAttribute("data-value")),
          el.parentElement?.getAttribute("href"),
        ]),
      );
    expect(points).toEqual(
      view.steps.map((s) => [`step ${s.step}`, s.progress.reward.mean, `/batches/${s.batch_id}`]),
    );
    await page.screenshot({ path: screenshotPath("run"), fullPage: true });

    // A one-batch series: its single point sits in [0, 1], not in an axis drawn around it.
    await page.goto(`${stack.workerUrl}/runs/${run}-val-`);
    expect(await page.locator("#chart-reward-mean circle.point").count()).toBe(1);
    expect(
      await page
        .locator("#chart-reward-mean text")
        .evaluateAll((els) => els.slice(0, 2).map((el) => el.textContent)),
    ).toEqual(["1", "0"]);
    await page
      .locator("#chart-reward-mean")
      .screenshot({ path: screenshotPath("run-single-point") });
  });

  it("group page: each member's GRPO and Dr.GRPO advantage is verl's formula over the group's rewards, and the group's verdict", async () => {
    const { stack, api, page, series, train, val } = ctx;
    const n = 2;
    for (const row of [0, 1, 2, 3, 4]) {
      const uid = `${train[0]}:${row}`;
      const members = (
        await api.get<{ rollouts: Array<{ reward: number | null; rollout_id: string }> }>(
          `/v1/batches/${train[0]}/rollouts?include_unreleased=true&offset=${row * n}&limit=${n}`,
        )
      ).rollouts;
      const rewards = members.map((m) => m.reward ?? 0);
      const mean = rewards.reduce((a, b) => a + b, 0) / n;
      const std = Math.sqrt(rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / (n - 1)); // unbiased, as torch.std
      const view = await api.get<{
        status: { verdict: string };
        members: Array<{ advantage_grpo: number; advantage_drgrpo: number; rollout_id: string }>;
      }>(`/v1/groups/${uid}`);
      expect(view.status.verdict).toBe("deliver");
      await page.goto(`${stack.workerUrl}/groups/${uid}`);
      expect(await page.locator('[data-field="verdict"]').getAttribute("data-verdict")).toBe(
        "deliver",
      );
      const shown = await page
        .locator("#members tr[data-sample-index]")
        .evaluateAll((els) =>
          els.map((el) =>
            ["reward", "advantage-grpo", "advantage-drgrpo"].map((f) =>
              Number(el.querySelector(`[data-field="${f}"]`)!.getAttribute("data-value")),
            ),
          ),
        );
      expect(shown.map(([r]) => r)).toEqual(rewards);
      shown.forEach(([r, grpo, drgrpo], i) => {
        expect(grpo).toBeCloseTo((r! - mean) / (std + 1e-6), 9);
        expect(drgrpo).toBeCloseTo(r! - mean, 12);
        expect(view.members[i]!.advantage_grpo).toBe(grpo);
      });
      if (new Set(rewards).size > 1 || row === 4) {
        await page.screenshot({ path: screenshotPath("group"), fullPage: true });
        break;
      }
    }
  });

  it("val batch page shows the eval report, and `edge-rollout eval --compare` prints the same numbers as the API", async () => {
    const { stack, api, page, series, train, val } = ctx;
    const report = await api.get<{ total: { pass_at_1: number; pass_at_k: number } }>(
      `/v1/batches/${val}/eval`,
    );
    await page.goto(`${stack.workerUrl}/batches/${val}`);
    expect(
      Number(
        (await text(page, '#evaluation tr[data-row="all"] [data-field="pass-at-1"]')).replace(
          "%",
          "",
        ),
      ) / 100,
    ).toBeCloseTo(report.total.pass_at_1, 3);
    expect(
      Number(
        (await text(page, '#evaluation tr[data-row="all"] [data-field="pass-at-k"]')).replace(
          "%",
          "",
        ),
      ) / 100,
    ).toBeCloseTo(report.total.pass_at_k, 3);
    await page.locator("#evaluation").screenshot({ path: screenshotPath("eval") });

    const args = [
      join(root, "bin/edge-rollout.mjs"),
      "eval",
      "test/fixtures/datasets/calculator.jsonl",
      "--agent",
      "calculator",
      "--n",
      "4",
      "--k",
      "2",
      "--limit",
      "4",
      "--batch-id",
      `${run}-val-2`,
      "--compare",
      val,
      "--interval",
      "200",
      "--json",
    ];
    const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>(
      (done, fail) => {
        const child = spawn(process.execPath, args, {
          cwd: root,
          env: { ...process.env, EDGE_ROLLOUT_URL: stack.workerUrl, EDGE_ROLLOUT_TOKEN: TOKEN },
          stdio: ["ignore", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
        child.once("error", fail);
        child.once("close", (code) => done({ code, stdout, stderr }));
      },
    );
    expect(out.code, out.stderr).toBe(0);
    const printed = JSON.parse(out.stdout) as {
      report: { batch_id: string; k: number };
      compare: { batch_id: string };
    };
    expect(printed.report).toEqual(await api.get(`/v1/batches/${run}-val-2/eval?k=2`));
    expect(printed.compare).toEqual(await api.get(`/v1/batches/${val}/eval?k=2`));
  }, 120_000);
}
