/**
 * @module `npm run bench:train`: what a trainer's schedule buys on equal hardware. The Worker on
 * Miniflare's API in front of G simulator processes (generation units whose engines time each
 * step by the default cost curve, so decode slows as sequences are added), one simulated trainer
 * (train-loop.ts) whose training time is proportional to the tokens it trains (capacity.ts), and
 * three schedules by default: `verl/hybrid` (all G units generate the batch, then the same G
 * train: colocated), `verl/one_step_off` (g units generate the next batch while G − g train this
 * one) and `async/k interrupt` (g units generate continuously, groups at most k versions stale,
 * interrupting syncs, as verl's fully_async recipe). `--modes` adds `async-drain`.
 *
 * The headline is trained tokens per second (samples/s beside it, and the tokens each mode threw
 * away): training costs per token, so a mode that trains short samples first or drops long ones
 * gains nothing from it. Every mode generates the same groups (sample keys `<group>:<member>`),
 * runs a warm-up step then `--steps` timed steps, 3 repeats with the order rotated; each ratio is
 * taken within a repeat. Parameters, k among them, are fixed by the flags before the run.
 *
 * Left out: weight-sync transfer time (NCCL broadcast to the rollout units, or the colocated
 * engine's wake-up and resharding: neither mode pays any here), the trainer's own stragglers and
 * optimizer step, prefill of long prompts (the prompts are ~20 tokens), multi-turn agents, and
 * GRPO's loss itself: what is trained is counted, not learned (bench:learn does learning).
 */
import { loadavg } from "node:os";
import { commandLine, integerFlag } from "../../scripts/command-line";
import { freePort } from "../../tools/simulator/free-port";
import { startBenchStack } from "../kit/bench-stack";
import { fetchAgain } from "../kit/fetch-again";
import { treeCpuByName } from "../kit/process-cpu";
import { type SimulatorProcess, startSimulatorProcess } from "../kit/simulator-process";
import {
  type Capacity,
  checkCapacity,
  describeCapacity,
  describeEngine,
  replicaEngine,
  split,
  trainWallMs,
} from "./capacity";
import { type ModeSpec, runMode } from "./train-loop";
import {
  headlineLines,
  type Measured,
  modeLines,
  repeatLine,
  sameOutcomesLine,
} from "./train-report";
import { routeTo, runStack } from "./train-stack";

const flags = {
  batch: { type: "string", default: "8", help: "B: GRPO groups (prompts) per training step" },
  n: { type: "string", default: "4", help: "samples per group" },
  steps: { type: "string", default: "8", help: "timed trainer steps per mode run" },
  "warm-up-steps": { type: "string", default: "1", help: "untimed steps before them" },
  repeats: { type: "string", default: "3", help: "runs of every mode, the order rotated each" },
  modes: {
    type: "string",
    default: "hybrid,one_step_off,async-interrupt",
    help: "modes, comma-separated: hybrid, one_step_off, async-interrupt, async-drain (the first is the ratios' baseline)",
  },
  k: {
    type: "string",
    default: "2",
    help: "staleness bounds of the async modes, comma-separated (one async line per k)",
  },
  gpus: { type: "string", default: "4", help: "G: GPU units every mode gets" },
  "rollout-gpus": {
    type: "string",
    default: "2",
    help: "g: units that generate in one_step_off and async (the other G − g train)",
  },
  "seqs-per-stream": {
    type: "string",
    default: "16",
    help: "F: real sequences one simulated stream stands for (scales the curve, the KV cache and the training cost)",
  },
  mfu: { type: "string", default: "0.4", help: "training's model FLOP utilisation" },
  generation: {
    type: "string",
    default: "pooled",
    help: "pooled: one simulator process per unit count (G for hybrid, g for the split modes), its engine modelling that many data-parallel replicas evenly loaded; processes: one process per unit behind the backend's routing (an interrupt sync marks replicas unhealthy today, so the split modes then run on one)",
  },
  "time-scale": {
    type: "string",
    default: "1",
    help: "wall ms per modelled ms (engine and trainer): below 1 the relay's share of the wall time grows",
  },
  tail: { type: "string", default: "pareto", help: "response-length tail: pareto or lognormal" },
  "tail-shape": { type: "string", default: "1.5", help: "pareto alpha or lognormal sigma" },
  "tail-scale-tokens": {
    type: "string",
    default: "64",
    help: "pareto minimum or lognormal median",
  },
  "tail-max-tokens": { type: "string", default: "2048", help: "longest answer preamble, tokens" },
  seed: { type: "string", default: "3", help: "the simulators' seed (the same in every process)" },
  verbose: { type: "boolean", default: false, help: "print the runtime's own output" },
} as const;
const values = commandLine({
  usage: "npm run bench:train -- [options]",
  description:
    "Trained tokens/s of verl's hybrid, one_step_off and async (interrupting syncs) schedules on the same GPU units, against heavy-tailed generation.",
  flags,
});
const batch = integerFlag("--batch", values.batch, 1, 64);
const n = integerFlag("--n", values.n, 1, 16);
const steps = integerFlag("--steps", values.steps, 1, 100);
const warmUpSteps = integerFlag("--warm-up-steps", values["warm-up-steps"], 0, 10);
const repeats = integerFlag("--repeats", values.repeats, 1, 10);
const staleness = values.k.split(",").map(Number);
if (staleness.some((bound) => !Number.isInteger(bound) || bound < 1))
  throw new RangeError(`--k: positive integers, comma-separated; got ${values.k}`);
const capacity: Capacity = checkCapacity({
  gpus: Number(values.gpus),
  rolloutGpus: Number(values["rollout-gpus"]),
  seqsPerStream: Number(values["seqs-per-stream"]),
  mfu: Number(values.mfu),
  timeScale: Number(values["time-scale"]),
});
if (!["pooled", "processes"].includes(values.generation))
  throw new RangeError("--generation must be pooled or processes");
if (!["pareto", "lognormal"].includes(values.tail))
  throw new RangeError("--tail must be pareto or lognormal");

const MODES: Record<string, (k: number) => ModeSpec> = {
  hybrid: () => ({ name: "verl/hybrid", schedule: "hybrid", syncMode: "drain", maxStaleness: 0 }),
  one_step_off: () => ({
    name: "verl/one_step_off",
    schedule: "one_step_off",
    syncMode: "drain",
    maxStaleness: 1,
  }),
  "async-interrupt": (k) => ({
    name: `async/${k} interrupt`,
    schedule: "async",
    syncMode: "interrupt",
    maxStaleness: k,
  }),
  "async-drain": (k) => ({
    name: `async/${k} drain`,
    schedule: "async",
    syncMode: "drain",
    maxStaleness: k,
  }),
};
const modes: ModeSpec[] = values.modes.split(",").flatMap((mode) => {
  const make = MODES[mode.trim()];
  if (!make)
    throw new RangeError(`--modes: unknown mode "${mode}" (${Object.keys(MODES).join(", ")})`);
  return mode.startsWith("async") ? staleness.map(make) : [make(0)];
});

console.log(
  `bench:train parameters: ${Object.keys(flags)
    .filter((name) => name !== "verbose")
    .map((name) => `--${name} ${values[name as keyof typeof flags]}`)
    .join(" ")}`,
);
console.log(
  `modes: ${modes.map((m) => m.name).join(", ")}; k run: ${staleness.join(", ")} (fixed by --k before the run); each run: ${warmUpSteps} warm-up step(s) untimed, then ${steps} timed steps of ${batch} groups × ${n} samples`,
);
for (const line of describeCapacity(capacity)) console.log(line);
console.log(
  values.generation === "pooled"
    ? `generation pooled: hybrid's ${describeEngine(capacity, capacity.gpus)}; one_step_off's and async's ${describeEngine(capacity, capacity.rolloutGpus)}`
    : `generation processes: one simulator process per unit, the backend routing least-loaded over ${capacity.gpus} (hybrid) or ${capacity.rolloutGpus}`,
);
console.log(
  `real: the Worker on Miniflare's API (external rollouts, the gateway streaming every call, the vllm backend pointed at the mode's generation process(es), drain and interrupt syncs, interrupted calls resumed from their token ids). modelled: the GPUs (the engines' cost curve, the trainer's per-token time), the answer lengths (${values.tail} shape ${values["tail-shape"]} from ${values["tail-scale-tokens"]} tokens, cap ${values["tail-max-tokens"]}, keyed by sample). load average at start: ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}`,
);

// Pooled: one process per unit count, each modelling that many units. Processes: one per unit.
const poolUnits =
  values.generation === "pooled"
    ? [capacity.gpus, capacity.rolloutGpus]
    : Array(capacity.gpus).fill(1);
const simulators: SimulatorProcess[] = [];
try {
  for (const units of poolUnits)
    simulators.push(
      await startSimulatorProcess({
        seed: Number(values.seed),
        ...replicaEngine(capacity, units),
        tail: {
          distribution: values.tail as "pareto" | "lognormal",
          shape: Number(values["tail-shape"]),
          scaleTokens: Number(values["tail-scale-tokens"]),
          maxTokens: Number(values["tail-max-tokens"]),
        },
      }),
    );
} catch (error) {
  await Promise.all(simulators.map((s) => s.stop()));
  throw error;
}
const replicas = simulators.map((s) => s.url);
/** The model servers `units` generation units are. */
const generationUrls = (units: number): string[] =>
  values.generation === "pooled" ? [replicas[poolUnits.indexOf(units)]!] : replicas.slice(0, units);
const stack = await startBenchStack({
  kind: "miniflare",
  port: await freePort(),
  modelServerUrl: replicas[0]!,
  stateDir: "bench-train",
  verbose: values.verbose,
}).catch(async (error: unknown) => {
  await Promise.all(simulators.map((s) => s.stop()));
  throw error;
});
// A runtime that dies mid-run is named, not left to surface as a refused connection later.
void stack.ended.then((reason) => console.error(`bench:train: the stack ended: ${reason}`));

/** Modelled engine ms so far, summed over `urls`. */
async function engineMs(urls: string[]): Promise<number> {
  const stats = await Promise.all(
    urls.map(async (url) => (await (await fetch(`${url}/sim/stats`)).json()) as any),
  );
  return stats.reduce((total, s) => total + (s.replica?.engineMs ?? 0), 0);
}
const simulatorCpu = () =>
  simulators.reduce(
    (total, s) => total + Object.values(treeCpuByName(s.child.pid!)).reduce((a, b) => a + b, 0),
    0,
  );

const stamp = Date.now().toString(36);
const results: Measured[] = [];
try {
  for (let repeat = 1; repeat <= repeats; repeat++) {
    const rotate = (repeat - 1) % modes.length;
    for (const spec of [...modes.slice(rotate), ...modes.slice(0, rotate)]) {
      const units = split(capacity, spec.schedule);
      const generating = generationUrls(units.generate);
      await routeTo(stack.workerUrl, generating);
      const version0 = (await (await fetchAgain(`${stack.workerUrl}/v1/policy`)).json())
        .policy_version;
      let before = { engine: 0, worker: 0, simulators: 0 };
      let after = before;
      const snapshot = async () => ({
        engine: await engineMs(generating),
        worker: stack.cpu().worker,
        simulators: simulatorCpu(),
      });
      const trainer = runStack({
        workerUrl: stack.workerUrl,
        replicas,
        n,
        runId: `train-${spec.name.replace(/[^A-Za-z0-9]+/g, "-")}-r${repeat}-${stamp}`,
        createAhead: batch,
      });
      const result = await runMode(trainer, spec, {
        batch,
        steps,
        warmUpSteps,
        version0,
        trainMs: (tokens) => trainWallMs(capacity, tokens, units.train),
        onTimed: async () => void (before = await snapshot()),
        onClosed: async () => void (after = await snapshot()),
      });
      const measured: Measured = {
        ...result,
        repeat,
        generationBusy:
          (after.engine - before.engine) /
          ((generating.length * result.wallMs) / capacity.timeScale),
        workerCores: (after.worker - before.worker) / result.wallMs,
        simulatorCores: (after.simulators - before.simulators) / result.wallMs,
      };
      results.push(measured);
      console.log(repeatLine(measured));
    }
  }
  for (const line of modeLines(
    results,
    modes.map((m) => m.name),
  ))
    console.log(line);
  for (const line of headlineLines(
    results,
    modes[0]!.name,
    modes.map((m) => m.name),
  ))
    console.log(line);
  console.log(sameOutcomesLine(results));
  console.log(
    `load average at the end: ${loadavg()
      .map((x) => x.toFixed(2))
      .join(
        " ",
      )}; left out: weight-transfer time of a sync, the optimizer step, long prompts, multi-turn agents (see the header of bench/train/train.bench.ts)`,
  );
} finally {
  await stack.stop();
  await Promise.all(simulators.map((s) => s.stop()));
}
process.exit(0);
