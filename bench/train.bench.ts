/**
 * @module `npm run bench:train`: what partial rollouts buy a trainer. One `npm start`-style stack
 * (Worker on Miniflare + the vLLM simulator with heavy-tailed response lengths), one simulated
 * trainer (bench/train-loop.ts) run in four schedules side by side: `verl/hybrid` (generate the
 * whole batch, train, drain sync), `verl/one_step_off` (the next batch generates while this one
 * trains; drain sync), `async/k` with a `drain` sync and `async/k` with an `interrupt` sync
 * (continuous generation, samples at most k versions stale). Loopback only, bounded.
 */
import { rmSync } from "node:fs";
import { commandLine } from "../scripts/command-line";
import { startDevStack } from "../scripts/dev-stack";
import type { TailOptions, VllmSimulatorOptions } from "../tools/simulator/options";
import { freePort } from "../tools/simulator/free-port";
import { fetchAgain } from "./fetch-again";
import { type ModeSpec, type SampleEnd, type TrainerStack, runMode } from "./train-loop";

const values = commandLine({
  usage: "npm run bench:train -- [options]",
  description:
    "Trained samples/s, trainer idle time and sync waits of four trainer schedules against heavy-tailed generation.",
  flags: {
    batch: { type: "string", default: "4", help: "B: prompts per step" },
    n: { type: "string", default: "4", help: "samples per prompt" },
    steps: { type: "string", default: "4", help: "trainer steps per mode" },
    "train-ms": {
      type: "string",
      default: "",
      help: "time one step trains (default: the median rollout time, measured first)",
    },
    tail: { type: "string", default: "pareto", help: "response-length tail: pareto or lognormal" },
    shape: {
      type: "string",
      default: "",
      help: "pareto alpha (default 1.5) or lognormal sigma (default 1)",
    },
    "per-token-ms": {
      type: "string",
      default: "30",
      help: "simulated decode time per token (30 ms: 32 streams stay well under what one local workerd relays, so the schedule, not the relay, is measured)",
    },
    k: {
      type: "string",
      default: "2,1",
      help: "staleness bounds of the async modes, comma-separated: the first is the headline (drain and interrupt, the ratio), each further one adds an interrupt line beside it",
    },
    only: {
      type: "string",
      default: "",
      help: "run only the modes whose name contains this (e.g. interrupt); the ratio needs hybrid and async+interrupt",
    },
    verbose: { type: "boolean", default: false, help: "print the runtime's own output" },
  },
});
const batch = Number(values.batch) * Number(values.n);
const steps = Number(values.steps);
const staleness = values.k.split(",").map(Number);
if (staleness.some((bound) => !Number.isInteger(bound) || bound < 1))
  throw new Error(`--k: positive integers, comma-separated; got ${values.k}`);
// k = 2 by default: at k = 1 a heavy tail leaves the trainer idle ~20% under any stack
// (bench/train_schedule_model.py, docs/scale.md "Partial rollouts"), and two-step policy lag is
// what recent async trainers run (VCPO, arXiv 2602.17616: k = 2 for multi-turn tool RL). k = 1
// stays printed beside it.
const k = staleness[0]!;
const tail: TailOptions = {
  distribution: values.tail as TailOptions["distribution"],
  scaleTokens: 64,
  maxTokens: 2048,
  ...(values.shape ? { shape: Number(values.shape) } : {}),
};
const simulator: VllmSimulatorOptions = {
  port: 0,
  seed: 3,
  latency: { ttftMs: 0, perTokenMs: Number(values["per-token-ms"]) },
  tail,
};

const stateDir = `.tmp/bench-train-${process.pid}`;
const stack = await startDevStack("miniflare", {
  workerPort: await freePort(),
  stateDir,
  reset: true,
  simulator,
  onAgentLog: null,
  verbose: values.verbose,
});
// A runtime that dies mid-run is named, not left to surface as a refused connection later.
void stack.ended.then((reason) => console.error(`bench:train: the stack ended: ${reason}`));
const json = async (path: string, init?: RequestInit): Promise<any> =>
  (
    await fetchAgain(`${stack.workerUrl}${path}`, {
      ...init,
      headers: { "content-type": "application/json" },
    })
  ).json();

/** External rollouts reused across samples (one call at a time each), so a sample costs one gateway call, not a rollout's creation too. */
const idle: Array<{ llm: { base_url: string; api_key: string } }> = [];
async function rolloutFor(): Promise<{ llm: { base_url: string; api_key: string } }> {
  return (
    idle.pop() ??
    json("/v1/rollouts", {
      method: "POST",
      body: JSON.stringify({
        agent: "external",
        task: { problem: "bench" },
        config: {
          max_response_length: 1_000_000,
          rollout_timeout_ms: 3_600_000,
          step_timeout_ms: 3_600_000,
        },
      }),
    })
  );
}

/** Completion tokens in a streamed answer's text: the ids of every chunk's non-empty `token_ids` list. */
function countTokens(text: string): number {
  return (text.match(/"token_ids":\[[^\]]*\]/g) ?? []).reduce(
    (n, ids) => n + (ids.length > 13 ? ids.split(",").length : 0),
    0,
  );
}

async function oneCall(signal?: AbortSignal): Promise<SampleEnd> {
  const rollout = await rolloutFor();
  let text = "";
  try {
    const response = await fetch(`${rollout.llm.base_url}/chat/completions`, {
      method: "POST",
      signal,
      headers: {
        "content-type": "application/json",
        authorization: `Bearer ${rollout.llm.api_key}`,
      },
      body: JSON.stringify({
        model: "any",
        stream: true,
        max_tokens: 4096,
        messages: [{ role: "user", content: `Write sample ${Math.random()}.` }],
      }),
    });
    if (response.status === 429) {
      // Weights are syncing: the agent waits, as an OpenAI client honouring Retry-After does (short here).
      await response.arrayBuffer();
      await new Promise((resolve) => setTimeout(resolve, 50));
      return oneCall(signal);
    }
    if (!response.ok) {
      const id = /rollouts\/([^/]+)\//.exec(rollout.llm.base_url)?.[1];
      throw new Error(
        `gateway answered ${response.status}: ${(await response.text()).slice(0, 200)}; the rollout: ${JSON.stringify(await json(`/v1/rollouts/${id}`)).slice(0, 1500)}`,
      );
    }
    // Read as it comes, so a sample the trainer gives up on still counts the tokens it got.
    const decoder = new TextDecoder();
    for await (const chunk of response.body!) text += decoder.decode(chunk, { stream: true });
    return { tokens: countTokens(text), aborted: false };
  } catch (error) {
    if (signal?.aborted) return { tokens: countTokens(text), aborted: true };
    throw error;
  } finally {
    // A rollout whose call was given up on is not reused: its session may still be reading that call upstream.
    if (!signal?.aborted) idle.push(rollout);
  }
}

const trainer: TrainerStack = {
  async sample(signal) {
    // A call the loaded local stack drops is retried (bounded); a sample is what the trainer gets.
    for (let attempt = 1; ; attempt++) {
      try {
        return await oneCall(signal);
      } catch (error) {
        if (attempt >= 3) throw error;
      }
    }
  },
  async sync(mode, nextVersion) {
    const t = performance.now();
    await json("/v1/policy/sync/begin", {
      method: "POST",
      body: JSON.stringify({ mode, wait_ms: 600_000 }),
    });
    const waited = performance.now() - t;
    await fetchAgain(`${stack.modelServerUrl}/sim/config`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ policyVersion: nextVersion }),
    });
    const ended = await json("/v1/policy/sync/end", {
      method: "POST",
      body: JSON.stringify({ policy_version: nextVersion }),
    });
    // A repeated end (its first answer was lost with its connection) finds the version already in force.
    if (
      ended.policy_version !== nextVersion &&
      (await json("/v1/policy")).policy_version !== nextVersion
    )
      throw new Error(`sync/end to ${nextVersion} failed: ${JSON.stringify(ended)}`);
    return waited;
  },
};

try {
  // The median rollout time, for the default train time (one rollout's worth of training per step).
  const times: number[] = [];
  await Promise.all(
    Array.from({ length: batch }, async () => {
      const t = performance.now();
      await trainer.sample();
      times.push(performance.now() - t);
    }),
  );
  times.sort((a, b) => a - b);
  const trainMs = values["train-ms"]
    ? Number(values["train-ms"])
    : Math.round(times[Math.floor(times.length / 2)]!);
  console.log(
    `bench:train: B×n = ${values.batch}×${values.n}, ${steps} steps per mode, --train-ms ${trainMs} (median rollout), --tail ${tail.distribution} shape ${tail.shape ?? (tail.distribution === "pareto" ? 1.5 : 1)} (scale 64 tokens, cap 2048), ${values["per-token-ms"]} ms/token, k = ${values.k}; every sample is a plain call, so 100% of tokens are interruptible; each mode is timed from its first step's training on (filling the pipeline once is start-up)`,
  );
  const modes: ModeSpec[] = [
    { name: "verl/hybrid", schedule: "hybrid", syncMode: "drain", maxStaleness: 0 },
    { name: "verl/one_step_off", schedule: "one_step_off", syncMode: "drain", maxStaleness: 1 },
    { name: `async/${k} drain`, schedule: "async", syncMode: "drain", maxStaleness: k },
    { name: `async/${k} interrupt`, schedule: "async", syncMode: "interrupt", maxStaleness: k },
    ...staleness.slice(1).map((bound): ModeSpec => ({
      name: `async/${bound} interrupt`,
      schedule: "async",
      syncMode: "interrupt",
      maxStaleness: bound,
    })),
  ];
  const results = [];
  for (const spec of modes.filter((mode) => mode.name.includes(values.only))) {
    const version0 = (await json("/v1/policy")).policy_version as number;
    const result = await runMode(trainer, spec, { batch, steps, trainMs, version0 });
    results.push(result);
    console.log(
      `mode ${result.name}: trained samples/s ${result.samplesPerS.toFixed(2)}, trainer idle ${result.idlePct.toFixed(0)}%, sync wait p50 ${result.syncP50S.toFixed(2)} s max ${result.syncMaxS.toFixed(2)} s, staleness max ${result.stalenessMax}, tokens discarded ${result.tokensDiscarded}`,
    );
  }
  const [hybrid, interrupt] = [
    results.find((r) => r.name === "verl/hybrid"),
    results.find((r) => r.name === `async/${k} interrupt`),
  ];
  if (hybrid && interrupt) {
    const ratio = interrupt.samplesPerS / hybrid.samplesPerS;
    console.log(`ratio async+interrupt / hybrid: ${ratio.toFixed(2)}`);
    const met = (ok: boolean) => (ok ? "met" : "NOT met");
    console.log(
      `goal (${interrupt.name}): R >= 2 ${met(ratio >= 2)}, trainer idle <= 10% ${met(interrupt.idlePct <= 10)}, sync wait max <= 1 s ${met(interrupt.syncMaxS <= 1)}`,
    );
  }
} finally {
  await stack.stop();
  rmSync(stateDir, { recursive: true, force: true });
}
process.exit(0);
