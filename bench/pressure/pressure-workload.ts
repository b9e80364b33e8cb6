/**
 * @module bench:pressure's workload and its two dispatchers. A rollout is `turns` model calls;
 * each call's prompt is the whole episode so far (the first prompt, then every completion and
 * every observation), so a rollout's KV need grows mid-episode; between calls it "runs a tool"
 * for `envMs` and appends an observation. A dispatcher keeps rollouts in flight: `fixed` a
 * constant number, `pressure` the number the controller's rule (src/runtime/pressure) sets from
 * the simulator's `/metrics`, cancelling the youngest under sustained overload and re-running them
 * later from the start (their work is lost; they are not failures).
 */
import { setTimeout as sleep } from "node:timers/promises";
import {
  INITIAL_PRESSURE_STATE,
  nextPressureState,
  parsePressure,
  type PressureState,
} from "../../src/runtime/pressure";
import type { PressureConfig } from "../../src/schemas/pressure";

/** The episode shape, fixed before a run. */
export interface Workload {
  rollouts: number;
  turns: number;
  /** Tokens of each rollout's first prompt (its own: no prefix shared between rollouts). */
  promptTokens: number;
  /** Tokens each call generates (`max_tokens` with `ignore_eos`). */
  outputTokens: number;
  /** Tokens of the observation appended after each call. */
  observationTokens: number;
  /** Wall ms a tool runs between two calls. */
  envMs: number;
}

/** How rollouts in flight are chosen. */
export type Control =
  | { kind: "fixed"; concurrency: number }
  | { kind: "pressure"; config: PressureConfig; ceiling: number };

/** What one run measured. */
export interface ArmResult {
  seconds: number;
  rolloutsPerS: number;
  preemptions: number;
  p90CallMs: number;
  /** Rollouts cancelled under overload and run again. */
  requeued: number;
  /** The controller's limit, averaged over its samples (the fixed arm: its concurrency). */
  meanLimit: number;
  /** Rollouts in flight, averaged over the samples. */
  meanInFlight: number;
}

/** How often the dispatchers sample: the pressure arm's `period_ms` (the schema's least), and the fixed arm's in-flight count. */
export const SAMPLE_MS = 250;

/** Valid token ids of the simulator's vocabulary, to build prompts and observations from. */
export async function tokenPool(url: string): Promise<number[]> {
  const words = Array.from({ length: 600 }, (_, i) => `word${i} and value ${i * 7} then`);
  const response = await fetch(`${url}/tokenize`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ prompt: words.join(" ") }),
  });
  const { tokens } = (await response.json()) as { tokens: number[] };
  return tokens;
}

/** `count` ids from the pool starting at a position of `seed`'s (distinct seeds: distinct blocks). */
function slice(pool: readonly number[], seed: number, count: number): number[] {
  const start = (seed * 7919) % pool.length;
  return Array.from({ length: count }, (_, i) => pool[(start + i * 13) % pool.length]!);
}

async function metrics(url: string) {
  const text = await (await fetch(`${url}/metrics`)).text();
  return parsePressure(url, text)!;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
}

/** Runs every rollout of `workload` to its end under `control`; `salt` keeps runs' prefix caches apart. */
export async function runArm(
  url: string,
  workload: Workload,
  pool: readonly number[],
  control: Control,
  salt: string,
): Promise<ArmResult> {
  const before = await metrics(url);
  const queue = Array.from({ length: workload.rollouts }, (_, i) => i);
  const inFlight = new Map<number, AbortController>(); // insertion order = start order
  const latencies: number[] = [];
  let done = 0;
  let requeued = 0;
  let state: PressureState = INITIAL_PRESSURE_STATE;
  const limits: number[] = [];
  const limit = () =>
    control.kind === "fixed" ? control.concurrency : (state.limit ?? control.ceiling);
  let finished!: () => void;
  const allDone = new Promise<void>((resolve) => (finished = resolve));

  const rollout = async (index: number, abort: AbortController): Promise<void> => {
    let context = slice(pool, index * 31 + 1, workload.promptTokens);
    for (let turn = 0; turn < workload.turns; turn++) {
      const started = performance.now();
      const response = await fetch(`${url}/v1/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "sim-qwen3",
          prompt: context,
          max_tokens: workload.outputTokens,
          ignore_eos: true,
          return_token_ids: true,
          cache_salt: salt,
        }),
        signal: abort.signal,
      });
      const body = (await response.json()) as { choices: Array<{ token_ids: number[] }> };
      latencies.push(performance.now() - started);
      const observation = slice(pool, index * 131 + turn * 17 + 3, workload.observationTokens);
      context = [...context, ...body.choices[0]!.token_ids, ...observation];
      await sleep(workload.envMs, undefined, { signal: abort.signal });
    }
  };

  const fill = (): void => {
    while (inFlight.size < limit() && queue.length > 0) {
      const index = queue.shift()!;
      const abort = new AbortController();
      inFlight.set(index, abort);
      rollout(index, abort).then(
        () => {
          inFlight.delete(index);
          done += 1;
          if (done === workload.rollouts) finished();
          fill();
        },
        (error: unknown) => {
          inFlight.delete(index);
          if (!abort.signal.aborted) throw error;
          requeued += 1;
          queue.push(index); // re-run later, from the start
          fill();
        },
      );
    }
  };

  const wall0 = performance.now();
  let sampling = true;
  const held: number[] = [];
  const sampler = (async () => {
    while (sampling) {
      await sleep(SAMPLE_MS);
      if (!sampling) break;
      held.push(inFlight.size);
      if (control.kind !== "pressure") continue;
      const epoch = state.requeue_epoch;
      state = nextPressureState(state, control.config, {
        replicas: [await metrics(url)],
        inFlight: inFlight.size,
        ceiling: control.ceiling,
      });
      limits.push(limit());
      if (state.requeue_epoch > epoch) {
        // Sustained overload: the youngest rollouts above the limit are cancelled (least work lost).
        const youngest = [...inFlight.entries()].reverse().slice(0, inFlight.size - limit());
        for (const [, abort] of youngest) abort.abort();
      }
      fill();
    }
  })();
  fill();
  await allDone;
  sampling = false;
  await sampler;
  const seconds = (performance.now() - wall0) / 1000;
  const after = await metrics(url);
  return {
    seconds,
    rolloutsPerS: workload.rollouts / seconds,
    preemptions: after.preemptions - before.preemptions,
    p90CallMs: percentile(latencies, 0.9),
    requeued,
    meanLimit: limits.length > 0 ? limits.reduce((a, b) => a + b, 0) / limits.length : limit(),
    meanInFlight: held.length > 0 ? held.reduce((a, b) => a + b, 0) / held.length : 0,
  };
}
