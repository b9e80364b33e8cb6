/**
 * @module bench:dashboard — how the dashboard copes with big data, in headless Chromium: a batch of
 * 10,000 rollouts (2,500 rows × 4, one running at a time so nearly all stay queued) listed at its
 * first page, its last page and a filtered middle page, and a rollout of 50 model calls rendered
 * with its token strip. Times are printed (browser and server), never asserted: the dashboard e2e
 * test checks the same pages on a small batch (issue 27 moved these sizes here from CI).
 * Run: `npm run bench:dashboard -- [--rows 2500] [--calls 50]` (needs Chromium, as the e2e test).
 */
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { startMiniflareStack } from "../../scripts/miniflare-stack";
import { freePort } from "../../tools/simulator/free-port";
import { launchChromium } from "../../test/fixtures/browser";
import { stackApi } from "../../test/fixtures/stack-api";

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const ROWS = flag("rows", 2500);
const CALLS = flag("calls", 50);
const TOKEN = "bench-dashboard-token";
const stateDir = `.tmp/bench-dashboard-${process.pid}`;

const stack = await startMiniflareStack({
  workerPort: await freePort(),
  simulator: { port: 0, seed: 7 },
  stateDir,
  reset: true,
  vars: { API_TOKEN: TOKEN },
  onAgentLog: null,
});
const browser = await launchChromium();
try {
  const api = stackApi(stack.workerUrl, TOKEN);
  const page = await (
    await browser.newContext({ viewport: { width: 1300, height: 1000 } })
  ).newPage();
  await page.goto(`${stack.workerUrl}/`);
  await page.fill('input[name="token"]', TOKEN);
  await page.click("#login-submit");
  await page.waitForURL(`${stack.workerUrl}/`);
  const text = async (selector: string) =>
    (await page.locator(selector).first().textContent())?.trim() ?? "";

  const big = `bench-big-${process.pid}`;
  const rows = Array.from({ length: ROWS }, (_, i) => ({
    prompt: `external row ${i}`,
    reward_model: { ground_truth: null },
  }));
  let started = Date.now();
  await api.post("/v1/batches", {
    batch_id: big,
    agent: "external",
    rows,
    n: 4,
    max_concurrent: 1,
    mode: "val",
    config: { step_timeout_ms: 600_000 },
  });
  const timings = [`POST /v1/batches of ${ROWS * 4} rollouts: ${Date.now() - started} ms`];
  for (const query of ["", `&offset=${ROWS * 4 - 50}`, `&status=not_released&offset=${ROWS * 2}`]) {
    started = Date.now();
    await page.goto(`${stack.workerUrl}/rollouts?batch=${big}${query}`);
    timings.push(
      `rollouts?batch=<${ROWS * 4}>${query}: ${Date.now() - started} ms in the browser (server ${await text('[data-field="server-ms"]')} ms), ${await page.locator("table.rollouts tr[data-rollout-id]").count()} rows shown`,
    );
  }

  const external = await api.post<{ rollout_id: string; llm: { api_key: string } }>(
    "/v1/rollouts",
    { agent: "external", task: { problem: "Talk for many turns." } },
  );
  const messages: Array<{ role: string; content: string }> = [
    { role: "user", content: "Talk for many turns." },
  ];
  for (let i = 0; i < CALLS; i++) {
    const reply = await api.post<{ choices: Array<{ message: { content: string } }> }>(
      `/v1/rollouts/${external.rollout_id}/llm/v1/chat/completions`,
      { model: "any", messages, max_tokens: 24 },
      { authorization: `Bearer ${external.llm.api_key}` },
    );
    messages.push(
      { role: "assistant", content: reply.choices[0]!.message.content },
      { role: "user", content: `Turn ${i + 2}.` },
    );
  }
  await api.post(`/v1/rollouts/${external.rollout_id}/finish`, { reward: 1 });
  started = Date.now();
  await page.goto(`${stack.workerUrl}/rollouts/${external.rollout_id}`);
  const loaded = Date.now() - started;
  const frameMs = await page.evaluate(
    () =>
      new Promise<number>((done) => {
        const t = performance.now();
        requestAnimationFrame(() => done(performance.now() - t));
      }),
  );
  timings.push(
    `rollout with ${CALLS} calls: loaded in ${loaded} ms, ${await page.locator(".strip .t").count()} token elements, ${await page.locator(".turn").count()} turns, next frame after ${frameMs.toFixed(1)} ms`,
  );
  console.log(`bench:dashboard\n  ${timings.join("\n  ")}`);
} finally {
  await browser.close();
  await stack.stop();
  rmSync(resolve(import.meta.dirname, "../..", stateDir), { recursive: true, force: true });
}
