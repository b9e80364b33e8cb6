/** @module One batch of `bench:sampling` run to its end against a local stack, and what it delivered. */
import type { BatchProgress, BatchRolloutEntry } from "../../src/schemas/batch";
import { type EngineUsage, usageBetween, waitIdle } from "./simulator-usage";

/** A math task as a verl dataset row. */
export interface MathRow {
  prompt: string;
  reward_model: { ground_truth: string };
  extra_info: { index: number };
}

/** What one batch gave, as a trainer would count it. */
export interface SamplingOutcome {
  /** From the POST until the batch is done (every rollout terminal, a cut's cancels included). */
  wallMs: number;
  /** Groups the batch delivered to the trainer (`groups.delivered`). */
  deliveredGroups: number;
  /** Complete groups (every member finished) whose members did not all score alike: a GRPO gradient. */
  signalGroups: number;
  /** Complete groups whose members all scored alike. */
  uniformGroups: number;
  /** The reward of every member that finished (not cancelled), by sample key `<row>:<sample>`. */
  rewards: Map<string, number>;
  /** What the simulator did for this batch, its cancelled calls included (read once it was idle again). */
  engine: EngineUsage;
  /** How long after `done` the simulator still ran calls of this batch. */
  idleAfterMs: number;
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

/**
 * Submits `body` on an idle simulator, polls until the batch is done, waits for the simulator to
 * be idle again, and counts the batch's complete groups by signal from its own listing.
 */
export async function runBatch(
  workerUrl: string,
  simulatorUrl: string,
  body: { batch_id: string } & Record<string, unknown>,
): Promise<SamplingOutcome> {
  const { counters: before } = await waitIdle(simulatorUrl);
  const started = performance.now();
  await json(
    await fetch(`${workerUrl}/v1/batches`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
  let progress: BatchProgress;
  for (;;) {
    progress = await json<BatchProgress>(await fetch(`${workerUrl}/v1/batches/${body.batch_id}`));
    if (progress.done) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const wallMs = performance.now() - started;
  const { counters: after, waitedMs } = await waitIdle(simulatorUrl);
  const byRow = new Map<number, number[]>();
  const rewards = new Map<string, number>();
  for (const run of await listRuns(workerUrl, body.batch_id)) {
    if (run.status !== "succeeded" && run.status !== "failed") continue;
    const reward = run.reward ?? 0;
    rewards.set(`${run.row_index}:${run.sample_index}`, reward);
    byRow.set(run.row_index, [...(byRow.get(run.row_index) ?? []), reward]);
  }
  let signalGroups = 0;
  let uniformGroups = 0;
  for (const members of byRow.values()) {
    if (members.length < progress.n) continue;
    if (new Set(members).size > 1) signalGroups += 1;
    else uniformGroups += 1;
  }
  return {
    wallMs,
    deliveredGroups: progress.groups.delivered,
    signalGroups,
    uniformGroups,
    rewards,
    engine: usageBetween(before, after),
    idleAfterMs: waitedMs,
    progress,
  };
}
