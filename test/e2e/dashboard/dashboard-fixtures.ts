/** @module What the dashboard's end-to-end groups share: the stack, the browser page logged in by the first group, the batches run on it. */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { type MiniflareStack, startMiniflareStack } from "../../../scripts/miniflare-stack";
import type { LlmCall } from "../../../src/schemas/llm-call";
import { launchChromium } from "../../fixtures/browser";
import { freePort } from "../../../tools/simulator/free-port";
import { stackApi, type StackApi } from "../../fixtures/stack-api";

/** The repository root. */
export const root = resolve(import.meta.dirname, "../../..");
/** The stack's API_TOKEN (the login form takes it too). */
export const TOKEN = "e2e-dashboard-token";
/** The calculator dataset's rows. */
export const rows = readFileSync(join(root, "test/fixtures/datasets/calculator.jsonl"), "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as Record<string, unknown>);
/** This process's prefix for batch ids. */
export const run = `dash${process.pid}`;

/** A batch's progress as the API reports it. */
export interface Progress {
  done: boolean;
  status: string;
  counts: Record<string, number>;
  reward: { mean: number | null; count: number };
  termination_reasons: Record<string, number>;
}
/** The part of a rollout view the pages are checked against. */
export interface View {
  status: string;
  llm_calls: LlmCall[];
}

/** The response tokens of one merged sample as the API's raw calls imply them: [id, mask, logprob]. */
export function expectedStrip(calls: readonly LlmCall[]): Array<[number, 0 | 1, number]> {
  const tokens: Array<[number, 0 | 1, number]> = [];
  let covered = calls[0]!.prompt_token_ids.length;
  for (const call of calls) {
    for (const id of call.prompt_token_ids.slice(covered)) tokens.push([id, 0, 0]);
    call.completion_token_ids.forEach((id, i) => tokens.push([id, 1, call.logprobs[i]!]));
    covered = call.prompt_token_ids.length + call.completion_token_ids.length;
  }
  return tokens;
}

/** The trimmed text of the first element `selector` matches. */
export const text = async (page: Page, selector: string) =>
  (await page.locator(selector).first().textContent())?.trim() ?? "";

/** The stack, the browser and the batches every group reads; `page` is logged in by the first group. */
export interface DashboardContext {
  stack: MiniflareStack;
  api: StackApi;
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** The explicit series of the three training steps (the run view's). */
  series: string;
  /** Three training steps named as the verl manager names them. */
  train: string[];
  /** One validation batch. */
  val: string;
  /** The model server's own text of `tokens`. */
  detokenize(tokens: readonly number[]): Promise<string>;
}

/** Starts the stack behind API_TOKEN and Chromium, and runs the three training batches and the val batch to the end. */
export async function startDashboard(): Promise<DashboardContext> {
  const series = `${run}-train`;
  const train = [1, 2, 3].map((step) => `${run}-s${step}-train${step}`);
  const val = `${run}-val-1`;
  const stack = await startMiniflareStack({
    workerPort: await freePort(),
    simulator: { port: 0, seed: 7 },
    stateDir: `.tmp/e2e-dashboard-${process.pid}`,
    vars: { API_TOKEN: TOKEN },
  });
  const api = stackApi(stack.workerUrl, TOKEN);
  const browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1300, height: 1000 } });
  const page = await context.newPage();
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
  return { stack, api, browser, context, page, series, train, val, detokenize };
}
