/** @module One batch of `bench:sampling` run to its end against a local stack, and what it delivered. */
import type { BatchProgress, BatchRolloutEntry } from "../src/schemas/batch";

/** A math task as a verl dataset row. */
export interface MathRow {
  prompt: string;
  reward_model: { ground_truth: string };
  extra_info: { index: number };
}

/** What one batch gave, as a trainer would count it. */
export interface SamplingOutcome {
  label: string;
  wallMs: number;
  /** Complete groups whose members did not all score alike (carry a GRPO gradient). */
  signalGroups: number;
  /** Complete groups whose members all scored alike. */
  uniformGroups: number;
  progress: BatchProgress;
}

async function json<T>(response: Response): Promise<T> {
  if (!response.ok)
    throw new Error(`${response.url} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

/** Every current run of a batch (superseded ones left out), page by page. */
async function listRuns(url: string, batchId: string): Promise<BatchRolloutEntry[]> {
  const runs: BatchRolloutEntry[] = [];
  for (let offset = 0; ; offset += 1000) {
    const page = await json<{ total: number; rollouts: BatchRolloutEntry[] }>(
      await fetch(`${url}/v1/batches/${batchId}/rollouts?limit=1000&offset=${offset}`),
    );
    runs.push(...page.rollouts);
    if (offset + 1000 >= page.total) return runs.filter((run) => !run.superseded);
  }
}

/** Submits `body`, waits until the batch is done, and counts its complete groups by signal from its own listing. */
export async function runBatch(
  url: string,
  label: string,
  body: Record<string, unknown>,
): Promise<SamplingOutcome> {
  const started = performance.now();
  await json(
    await fetch(`${url}/v1/batches`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
  let progress: BatchProgress;
  for (;;) {
    progress = await json<BatchProgress>(await fetch(`${url}/v1/batches/${String(body.batch_id)}`));
    if (progress.done) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const wallMs = performance.now() - started;
  const byRow = new Map<number, number[]>();
  for (const run of await listRuns(url, String(body.batch_id))) {
    if (run.status !== "succeeded" && run.status !== "failed") continue;
    byRow.set(run.row_index, [...(byRow.get(run.row_index) ?? []), run.reward ?? 0]);
  }
  let signalGroups = 0;
  let uniformGroups = 0;
  for (const rewards of byRow.values()) {
    if (rewards.length < progress.n) continue;
    if (new Set(rewards).size > 1) signalGroups += 1;
    else uniformGroups += 1;
  }
  return { label, wallMs, signalGroups, uniformGroups, progress };
}
