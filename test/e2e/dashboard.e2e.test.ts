/**
 * End to end in a real browser: the local stack behind an API_TOKEN, batches run on it, and every
 * dashboard page checked against the API's own numbers in headless Chromium. Screenshots go to
 * .tmp/screenshots/. Timings on big data are bench/dashboard.bench.ts's (the machine is shared).
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MiniflareStack, startMiniflareStack } from "../../scripts/miniflare-stack";
import type { LlmCall } from "../../src/schemas/llm-call";
import { launchChromium, screenshotPath } from "../fixtures/browser";
import { freePort } from "../../tools/simulator/free-port";
import { stackApi, type StackApi } from "../fixtures/stack-api";

const root = resolve(import.meta.dirname, "../..");
const TOKEN = "e2e-dashboard-token";
const rows = readFileSync(join(root, "test/fixtures/datasets/calculator.jsonl"), "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as Record<string, unknown>);
const run = `dash${process.pid}`;

interface Progress {
  done: boolean;
  status: string;
  counts: Record<string, number>;
  reward: { mean: number | null; count: number };
  termination_reasons: Record<string, number>;
}
interface View {
  status: string;
  llm_calls: LlmCall[];
}

/** The response tokens of one merged sample as the API's raw calls imply them: [id, mask, logprob]. */
function expectedStrip(calls: readonly LlmCall[]): Array<[number, 0 | 1, number]> {
  const tokens: Array<[number, 0 | 1, number]> = [];
  let covered = calls[0]!.prompt_token_ids.length;
  for (const call of calls) {
    for (const id of call.prompt_token_ids.slice(covered)) tokens.push([id, 0, 0]);
    call.completion_token_ids.forEach((id, i) => tokens.push([id, 1, call.logprobs[i]!]));
    covered = call.prompt_token_ids.length + call.completion_token_ids.length;
  }
  return tokens;
}

const text = async (page: Page, selector: string) =>
  (await page.locator(selector).first().textContent())?.trim() ?? "";

describe("the dashboard in Chromium against the local stack (end to end)", () => {
  let stack: MiniflareStack;
  let api: StackApi;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  // Three training steps named as the verl manager names them; their explicit series is the run view's.
  const series = `${run}-train`;
  const train = [1, 2, 3].map((step) => `${run}-s${step}-train${step}`);
  const val = `${run}-val-1`;

  beforeAll(async () => {
    stack = await startMiniflareStack({
      workerPort: await freePort(),
      simulator: { port: 0, seed: 7 },
      stateDir: `.tmp/e2e-dashboard-${process.pid}`,
      vars: { API_TOKEN: TOKEN },
    });
    api = stackApi(stack.workerUrl, TOKEN);
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1300, height: 1000 } });
    page = await context.newPage();
    for (const [i, id] of train.entries())
      await api.post("/v1/batches", {
        batch_id: id,
        series,
        agent: "calculator",
        rows: rows.slice(i * 5, i * 5 + 5),
        n: 2,
      });
    await api.post("/v1/batches", {
      batch_id: val,
      agent: "calculator",
      rows: rows.slice(0, 4),
      n: 4,
      mode: "val",
    });
    for (const id of [...train, val]) await api.waitForBatch(id);
  }, 240_000);

  /** The model server's own text of `tokens`. */
  const detokenize = async (tokens: readonly number[]) =>
    (
      (await (
        await fetch(`${stack.modelServerUrl}/detokenize`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ tokens }),
        })
      ).json()) as { prompt: string }
    ).prompt;

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it("refuses every page and the live stream without the session cookie, and logs in through the form", async () => {
    const anonymous = await browser.newContext();
    const stranger = await anonymous.newPage();
    await stranger.goto(`${stack.workerUrl}/batches/${train[0]}`);
    expect(new URL(stranger.url()).pathname).toBe("/login");
    expect(await stranger.evaluate(async () => (await fetch("/rollouts/x:0:0/live")).status)).toBe(
      401,
    );
    expect(await stranger.evaluate(async () => (await fetch("/v1/batches")).status)).toBe(401);
    for (const path of [`/runs/${series}`, `/groups/${train[0]}:0`]) {
      await stranger.goto(`${stack.workerUrl}${path}`);
      expect(new URL(stranger.url()).pathname).toBe("/login");
    }
    await stranger.fill('input[name="token"]', "not-the-token");
    await stranger.click("#login-submit");
    await stranger.locator("#login-error").waitFor();
    expect(new URL(stranger.url()).pathname).toBe("/login");
    await anonymous.close();

    await page.goto(`${stack.workerUrl}/`);
    await page.fill('input[name="token"]', TOKEN);
    await page.click("#login-submit");
    await page.waitForURL(`${stack.workerUrl}/`);
    expect(await page.evaluate(() => document.cookie)).not.toContain("edge_rollout_session");
  });

  it("overview: policy version, feed by training mode, backend replicas and recent batches equal the API's", async () => {
    // The feed may still be ingesting the batches' last groups: compare a fresh API read with a
    // fresh page until they agree (or 60 s pass), instead of guessing when the feed has settled.
    const mismatches = async (): Promise<string[]> => {
      const [stats, policy, backends] = await Promise.all([
        api.get<{
          by_training_mode: Record<
            string,
            { ready_groups: number; leased_groups: number; dropped_stale: number }
          >;
        }>("/v1/feed/stats"),
        api.get<{ policy_version: number }>("/v1/policy"),
        api.get<{ replicas: Array<{ replica: string; healthy: boolean; in_flight: number }> }>(
          "/v1/backends",
        ),
      ]);
      await page.goto(`${stack.workerUrl}/`);
      const expected: Array<[string, string]> = [
        ['[data-field="policy-version"]', String(policy.policy_version)],
      ];
      for (const [mode, counts] of Object.entries(stats.by_training_mode)) {
        expected.push([
          `tr[data-training-mode="${mode}"] [data-field="ready"]`,
          String(counts.ready_groups),
        ]);
        expected.push([
          `tr[data-training-mode="${mode}"] [data-field="dropped-stale"]`,
          String(counts.dropped_stale),
        ]);
      }
      for (const replica of backends.replicas) {
        expected.push([
          `tr[data-replica="${replica.replica}"] [data-field="in-flight"]`,
          String(replica.in_flight),
        ]);
        expected.push([
          `tr[data-replica="${replica.replica}"] .pill`,
          replica.healthy ? "healthy" : "unhealthy",
        ]);
      }
      const found: string[] =
        Object.keys(stats.by_training_mode).length === 0
          ? ["no training mode in /v1/feed/stats"]
          : [];
      for (const [selector, value] of expected) {
        const shown = await text(page, selector);
        if (shown !== value) found.push(`${selector}: page ${shown}, API ${value}`);
      }
      return found;
    };
    let found = await mismatches();
    for (
      const deadline = Date.now() + 60_000;
      found.length > 0 && Date.now() < deadline;
      found = await mismatches()
    )
      await new Promise((r) => setTimeout(r, 500));
    expect(found).toEqual([]);
    for (const id of [...train, val])
      expect(await page.locator(`#recent-batches tr[data-batch-id="${id}"]`).count()).toBe(1);
    await page.screenshot({ path: screenshotPath("overview"), fullPage: true });
  });

  it("batch page: counts, reward mean, histogram, reasons and the series chart equal the API's", async () => {
    const progress = await Promise.all(train.map((id) => api.get<Progress>(`/v1/batches/${id}`)));
    await page.goto(`${stack.workerUrl}/batches/${train[1]}`);
    for (const [status, count] of Object.entries(progress[1]!.counts))
      expect(await text(page, `[data-count="${status}"]`)).toBe(String(count));
    expect(Number(await text(page, '[data-field="reward-mean"]'))).toBeCloseTo(
      progress[1]!.reward.mean!,
      4,
    );
    expect(await text(page, '[data-field="reward-count"]')).toBe(String(progress[1]!.reward.count));
    const bins = await page
      .locator(".histogram .bin")
      .evaluateAll((els) => els.map((el) => Number(el.getAttribute("data-count"))));
    expect(bins.reduce((a, b) => a + b, 0)).toBe(progress[1]!.reward.count);
    for (const [reason, count] of Object.entries(progress[1]!.termination_reasons))
      expect(await text(page, `#termination tr[data-reason="${reason}"] td.num`)).toBe(
        String(count),
      );
    const points = await page
      .locator(".line-chart circle.point")
      .evaluateAll((els) =>
        els.map((el) => [el.getAttribute("data-label"), Number(el.getAttribute("data-value"))]),
      );
    expect(points).toEqual(train.map((id, i) => [id, progress[i]!.reward.mean]));
    await page.screenshot({ path: screenshotPath("batch"), fullPage: true });
  });

  it("rollouts table: filtered totals and the page's rows equal the API's listing", async () => {
    const listing = await api.get<{ total: number; rollouts: Array<{ rollout_id: string }> }>(
      `/v1/batches/${train[0]}/rollouts?include_unreleased=true&reward_min=1&limit=50`,
    );
    await page.goto(`${stack.workerUrl}/rollouts?batch=${train[0]}&reward_min=1`);
    expect(await text(page, '[data-field="total"]')).toBe(String(listing.total));
    expect(
      await page
        .locator("table.rollouts tr[data-rollout-id]")
        .evaluateAll((els) => els.map((el) => el.getAttribute("data-rollout-id"))),
    ).toEqual(listing.rollouts.map((r) => r.rollout_id));
    await page.goto(`${stack.workerUrl}/rollouts?status=succeeded`);
    const all = await Promise.all(
      [...train, val].map((id) =>
        api.get<{ total: number }>(`/v1/batches/${id}/rollouts?status=succeeded&limit=1`),
      ),
    );
    expect(await text(page, '[data-field="total"]')).toBe(
      String(all.reduce((sum, p) => sum + p.total, 0)),
    );
    await page.screenshot({ path: screenshotPath("rollouts"), fullPage: true });
  });

  it("rollout page: the calculator's token strip has one element per response token, with the API's masks, logprobs and policy versions", async () => {
    const listing = await api.get<{ rollouts: Array<{ rollout_id: string }> }>(
      `/v1/batches/${train[0]}/rollouts?limit=100`,
    );
    let view: View | undefined;
    for (const { rollout_id } of listing.rollouts) {
      view = await api.get<View>(`/v1/rollouts/${rollout_id}`);
      if (view.llm_calls.length >= 2 && view.llm_calls.every((c) => c.trainable)) {
        await page.goto(`${stack.workerUrl}/rollouts/${rollout_id}`);
        break;
      }
    }
    expect(view!.llm_calls.length).toBeGreaterThanOrEqual(2);
    const expected = expectedStrip(view!.llm_calls);
    const shown = await page
      .locator(".strip .t")
      .evaluateAll((els) =>
        els.map((el) => [
          Number(el.getAttribute("data-id")),
          Number(el.getAttribute("data-mask")),
          Number(el.getAttribute("data-logprob")),
        ]),
      );
    // A model token shows the engine's text of it (vLLM's logprob token strings), whitespace made visible.
    const texts = await page.locator('.strip .t[data-mask="1"]').allTextContents();
    const strings = view!.llm_calls.flatMap((c) => c.completion_token_strs ?? []);
    expect(texts).toEqual(
      strings.map((text) =>
        text === ""
          ? ""
          : text.replace(/ /g, "\u00b7").replace(/\n/g, "\u21b5").replace(/\t/g, "\u2192"),
      ),
    );
    // A plain-text call's token texts, concatenated, are the backend's own detokenization of its completion ids.
    const plain = view!.llm_calls.findIndex((c) => !c.response_message.tool_calls?.length);
    expect(plain).toBeGreaterThanOrEqual(0);
    const from = view!.llm_calls
      .slice(0, plain)
      .reduce((sum, c) => sum + c.completion_token_ids.length, 0);
    const tokenTexts = await page
      .locator('.strip .t[data-mask="1"]')
      .evaluateAll((els) => els.map((el) => el.getAttribute("data-token-text")));
    const plainIds = view!.llm_calls[plain]!.completion_token_ids;
    const detokenized = await detokenize(plainIds);
    expect(tokenTexts.slice(from, from + plainIds.length).join("")).toBe(detokenized);
    expect(detokenized).toContain("<|im_end|>");
    expect(
      await page.locator(`.strip .t.special[data-mask="1"][data-token-text="<|im_end|>"]`).count(),
    ).toBe(view!.llm_calls.length);
    // Context tokens (the prompt, tool results, template glue) show the backend's text too: those
    // before the last call's completion, concatenated, are its detokenization of that call's prompt ids.
    const last = view!.llm_calls[view!.llm_calls.length - 1]!;
    const promptTexts = await page
      .locator(".prompt-strip .p")
      .evaluateAll((els) => els.map((el) => el.getAttribute("data-token-text")));
    const responseTexts = await page
      .locator(".strip .t")
      .evaluateAll((els) => els.map((el) => el.getAttribute("data-token-text")));
    const contextTexts = [
      ...promptTexts,
      ...responseTexts.slice(0, last.prompt_token_ids.length - promptTexts.length),
    ];
    expect(contextTexts).toHaveLength(last.prompt_token_ids.length);
    expect(contextTexts.every((text) => typeof text === "string")).toBe(true);
    expect(contextTexts.join("")).toBe(await detokenize(last.prompt_token_ids));
    expect(
      await page
        .locator('.strip .t[data-mask="0"].special[data-token-text="<|im_start|>"]')
        .count(),
    ).toBeGreaterThan(0);
    expect(await page.locator(".prompt-strip .p.special").count()).toBeGreaterThan(0);
    expect(await page.locator(".sample").count()).toBe(1);
    expect(shown).toEqual(expected);
    expect(shown.filter(([, mask]) => mask === 1)).toHaveLength(
      view!.llm_calls.reduce((sum, c) => sum + c.completion_token_ids.length, 0),
    );
    const versions = await page
      .locator(".strip .call-mark")
      .evaluateAll((els) => els.map((el) => Number(el.getAttribute("data-policy-version"))));
    expect(versions).toEqual(view!.llm_calls.map((c) => c.policy_version_start));
    expect(await page.locator(".turn").count()).toBe(view!.llm_calls.length);
    await page.locator(".strip").first().scrollIntoViewIfNeeded();
    await page.screenshot({ path: screenshotPath("rollout-token-strip"), fullPage: true });
    await page.locator(".sample details summary").first().click();
    await page
      .locator(".sample")
      .first()
      .screenshot({ path: screenshotPath("rollout-context-tokens") });
  });

  it("run page lists every batch of the 3-step series in step order with the API's numbers, charts linking each batch", async () => {
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
    await page.goto(`${stack.workerUrl}/runs/${series}`);
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

  it("a running rollout's page follows it without a reload", async () => {
    stack.simulator!.configure({ latency: { ttftMs: 1500 } });
    try {
      const row = rows[3]! as {
        prompt: Array<{ content: string }>;
        reward_model: { ground_truth: unknown };
      };
      const created = await api.post<{ rollout_id: string }>("/v1/rollouts", {
        agent: "calculator",
        task: { problem: row.prompt.at(-1)!.content, ground_truth: row.reward_model.ground_truth },
      });
      await page.goto(`${stack.workerUrl}/rollouts/${created.rollout_id}`);
      expect(await page.locator("#live").count()).toBe(1);
      await page.evaluate(
        () => ((window as unknown as { __sameDocument: boolean }).__sameDocument = true),
      );
      const callsAtStart = Number(await text(page, '[data-field="llm-calls"]'));
      await page.waitForFunction(
        () => document.getElementById("live")?.textContent === "finished",
        undefined,
        { timeout: 60_000 },
      );
      await page.waitForFunction(
        () => Number(document.getElementById("rollout-body")?.dataset.updates) > 0,
      );
      const view = await api.get<View>(`/v1/rollouts/${created.rollout_id}`);
      expect(
        await page.evaluate(
          () => (window as unknown as { __sameDocument?: boolean }).__sameDocument,
        ),
      ).toBe(true);
      expect(Number(await text(page, '[data-field="llm-calls"]'))).toBe(view.llm_calls.length);
      expect(view.llm_calls.length).toBeGreaterThan(callsAtStart);
      expect(await text(page, '[data-field="status"] .pill')).toBe(view.status);
      await page.screenshot({ path: screenshotPath("live-rollout"), fullPage: true });
    } finally {
      stack.simulator!.configure({ latency: { ttftMs: 0 } });
    }
  }, 90_000);

  // The same pages at 10,000 rollouts and 50 calls, timed: `npx tsx bench/dashboard.bench.ts` (issue 27).
  it("lists a queued batch's first, last and filtered pages with the API's totals, renders a many-call rollout turn by turn, and cancels a batch from its page", async () => {
    const big = `${run}-big`;
    const ROLLOUTS = 400;
    const CALLS = 20;
    const bigRows = Array.from({ length: ROLLOUTS / 4 }, (_, i) => ({
      prompt: `external row ${i}`,
      reward_model: { ground_truth: null },
    }));
    await api.post("/v1/batches", {
      batch_id: big,
      agent: "external",
      rows: bigRows,
      n: 4,
      max_concurrent: 1,
      mode: "val",
      config: { step_timeout_ms: 600_000 },
    });
    for (const [query, rowsShown] of [
      ["", 50],
      [`&offset=${ROLLOUTS - 50}`, 50],
      [`&status=not_released&offset=${ROLLOUTS / 2}`, 50],
    ] as const) {
      await page.goto(`${stack.workerUrl}/rollouts?batch=${big}${query}`);
      expect(await page.locator("table.rollouts tr[data-rollout-id]").count(), query).toBe(
        rowsShown,
      );
    }
    // The last page is the not_released filter: its total is the API's, of nearly all of them (one runs at a time).
    const unreleased = await api.get<{ total: number }>(
      `/v1/batches/${big}/rollouts?status=not_released&include_unreleased=true&limit=1`,
    );
    expect(await text(page, '[data-field="total"]')).toBe(String(unreleased.total));
    expect(unreleased.total).toBeGreaterThan(ROLLOUTS - 10);

    const external = await api.post<{
      rollout_id: string;
      llm: { base_url: string; api_key: string };
    }>("/v1/rollouts", { agent: "external", task: { problem: "Talk for many turns." } });
    const messages: Array<{ role: string; content: string }> = [
      { role: "user", content: "Talk for many turns." },
    ];
    for (let i = 0; i < CALLS; i++) {
      const reply = await api.post<{ choices: Array<{ message: { content: string } }> }>(
        "/v1/rollouts/" + external.rollout_id + "/llm/v1/chat/completions",
        { model: "any", messages, max_tokens: 24 },
        { authorization: `Bearer ${external.llm.api_key}` },
      );
      messages.push(
        { role: "assistant", content: reply.choices[0]!.message.content },
        { role: "user", content: `Turn ${i + 2}.` },
      );
    }
    await api.post(`/v1/rollouts/${external.rollout_id}/finish`, { reward: 1 });
    await page.goto(`${stack.workerUrl}/rollouts/${external.rollout_id}`);
    expect(await page.locator(".turn").count()).toBe(CALLS);

    await page.goto(`${stack.workerUrl}/batches/${big}`);
    await page.click("#cancel-batch");
    await page.waitForURL(`${stack.workerUrl}/batches/${big}`);
    expect(["cancelling", "cancelled"]).toContain(
      (await api.get<Progress>(`/v1/batches/${big}`)).status,
    );
    expect(await page.locator("#cancel-batch").count()).toBe(0);
  }, 180_000);

  it("batch page lists the groups the feed dropped as stale after a weight sync, as the API does", async () => {
    const stale = `${run}-stale`;
    await api.post("/v1/batches", {
      batch_id: stale,
      agent: "calculator",
      rows: rows.slice(0, 2),
      n: 2,
      training_mode: "verl/hybrid",
    });
    await api.waitForBatch(stale);
    await page.goto(`${stack.workerUrl}/batches/${stale}`);
    expect(await page.locator("#dropped-groups").count()).toBe(0);
    // A real weight sync moves the policy on; the next pull naming the batch finds its groups too stale for verl/hybrid.
    const { policy_version } = await api.post<{ policy_version: number }>(
      "/v1/policy/sync/begin",
      {},
    );
    await api.post("/v1/policy/sync/end", { policy_version: policy_version + 1 });
    const pulled = await api.post<{ groups: unknown[]; dropped_groups: Array<{ uid: string }> }>(
      "/v1/feed/pull",
      { batch_id: stale, max_groups: 10 },
    );
    expect(pulled.groups).toEqual([]);
    const listed = await api.get<{
      dropped_groups: Array<{
        uid: string;
        reason: string;
        policy_version_start: number;
        policy_version_end: number;
        policy_version: number;
      }>;
    }>(`/v1/batches/${stale}/dropped-groups`);
    expect(listed.dropped_groups.map((g) => g.uid).sort()).toEqual(
      pulled.dropped_groups.map((g) => g.uid).sort(),
    );
    expect(listed.dropped_groups).toHaveLength(2);

    await page.goto(`${stack.workerUrl}/batches/${stale}`);
    expect(await text(page, '#dropped-groups [data-field="dropped-count"]')).toBe("2");
    for (const group of listed.dropped_groups) {
      const row = page.locator(`#dropped-groups tr[data-uid="${group.uid}"]`);
      expect(await row.locator('[data-field="reason"]').textContent()).toBe(group.reason);
      expect(await row.locator('[data-field="versions"]').textContent()).toBe(
        `${group.policy_version_start}–${group.policy_version_end}`,
      );
      expect(await row.locator('[data-field="at-version"]').textContent()).toBe(
        String(group.policy_version),
      );
    }
    await page.screenshot({ path: screenshotPath("batch-dropped-groups"), fullPage: true });
    // The group page says why such a group is never trained.
    await page.goto(`${stack.workerUrl}/groups/${listed.dropped_groups[0]!.uid}`);
    expect(await page.locator('[data-field="verdict"]').getAttribute("data-verdict")).toBe("stale");
    expect(await text(page, '[data-field="verdict"]')).toContain(
      `at version ${listed.dropped_groups[0]!.policy_version}`,
    );
    expect(await page.locator('#members [data-field="advantage-grpo"] .muted').count()).toBe(2); // not trained
    await page.screenshot({ path: screenshotPath("group-stale"), fullPage: true });
  }, 120_000);
});
