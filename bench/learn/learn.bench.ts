/**
 * @module `npm run bench:learn`: a real policy learns through edge-rollout. A small PyTorch
 * transformer (edge_rollout.learn) serves as the simulator's token source behind vLLM's wire; the
 * real local stack (Worker, gateway, feed) runs the `digits` agent; a GRPO trainer pulls complete
 * groups from the feed, recomputes every trained token's log-prob from `to_verl_batch`'s arrays
 * under the weights of its recorded version, steps its optimizer and syncs the weights (sync/begin,
 * /update_weights_from_disk, sync/end). Both schedules from the same starting checkpoint: verl's
 * hybrid (generate, then train, drain) and async/1 (the next batch generates while the trainer
 * works; interrupting syncs cut calls that then resume under the new weights). Then one probe step
 * of the starting policy at `--probe-temperature` per log-prob mode (no update) shows which mode
 * agrees with a trainer that divides its logits by the temperature, as verl's actor does.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { type BenchStack, startBenchStack } from "../kit/bench-stack";
import { freePort } from "../../tools/simulator/free-port";
import { startSimulatorProcess } from "../kit/simulator-process";
import { type EngineProcess, type StepLine, runTrainer, startEngine } from "./learn-processes";
import { digitsRows, outputIds, warmUp } from "./learn-setup";

const { values } = parseArgs({
  options: {
    steps: { type: "string", default: "20" },
    "rows-per-step": { type: "string", default: "16" },
    n: { type: "string", default: "8" },
    turns: { type: "string", default: "1" },
    lr: { type: "string", default: "0.003" },
    seed: { type: "string", default: "0" },
    "warmup-target": { type: "string", default: "0.3" },
    "probe-temperature": { type: "string", default: "0.7" },
    schedules: { type: "string", default: "hybrid,async" },
    "step-ms": { type: "string", default: "40" },
  },
});
const steps = Number(values.steps);
const turns = Number(values.turns) === 2 ? 2 : 1;
const seed = Number(values.seed);
const schedules = String(values.schedules).split(",") as Array<"hybrid" | "async">;
const stepMs = Number(values["step-ms"]);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const sum = (lines: StepLine[], pick: (l: StepLine) => number) =>
  lines.reduce((s, l) => s + pick(l), 0);
const agreement = (lines: StepLine[]) => {
  const tokens = sum(lines, (l) => l.tokens);
  const max = Math.max(...lines.map((l) => l.agreement_max)).toExponential(2);
  const avg = (sum(lines, (l) => l.agreement_mean * l.tokens) / tokens).toExponential(2);
  return `max |Δ| ${max}, mean |Δ| ${avg} over ${tokens} trained tokens`;
};

async function configureSim(url: string, patch: unknown): Promise<void> {
  const response = await fetch(`${url}/sim/config`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(patch),
  });
  if (!response.ok) throw new Error(`configuring the simulator: ${await response.text()}`);
}

/** The simulator's step time while a schedule runs: none for hybrid, `stepMs` a step for async. */
const costFor = (schedule: "hybrid" | "async") =>
  schedule === "async"
    ? { fixedMs: stepMs, perSequenceMs: 0, perPrefillTokenMs: 0, perKContextTokensMs: 0 }
    : null;

const workdir = resolve(".tmp/learn-runs", `run-${process.pid}`);
mkdirSync(workdir, { recursive: true });
const sim = await startSimulatorProcess({});
let stack: BenchStack | null = null;
let engine: EngineProcess | null = null;
try {
  const out = await outputIds(sim.url);
  const probability = await warmUp(sim.url, workdir, out, seed, Number(values["warmup-target"]));
  const checkpoint = join(workdir, "policy-v0.pt");
  stack = await startBenchStack({
    kind: "miniflare",
    modelServerUrl: sim.url,
    port: await freePort(),
    stateDir: "learn",
    // The stepwise driver streams its plain calls and registers their interrupts, so an interrupting
    // sync cuts them and they resume from token ids under the new weights (functions/env.ts).
    vars: { DRIVER_INTERRUPTIBLE_CALLS: "on" },
  });
  const rows = join(workdir, "rows.jsonl");
  writeFileSync(
    rows,
    digitsRows(turns, seed)
      .map((row) => JSON.stringify(row))
      .join("\n"),
  );
  const series = `learn-${turns}t-${Date.now()}`;
  console.log(
    `bench:learn: policy edge_rollout.learn.TinyPolicy (2 layers, dim 64, fp32, 1 thread) emitting ${out.length} ids; ` +
      `warm-up answer probability ${probability.toFixed(3)}; ${steps} steps of ${values["rows-per-step"]} rows x n=${values.n}, ` +
      `${turns} turn(s); schedules ${schedules.join(", ")} (async/1 with interrupting syncs, ${stepMs} ms engine steps); ` +
      `temperature 1, raw_logprobs, lr ${values.lr}; run pages ${stack.workerUrl}/runs/${series}-<schedule>`,
  );
  const common = ["--url", stack.workerUrl, "--model-url", sim.url, "--rows", rows];
  const report: string[] = [];
  let version = 0;
  let learned = true;
  for (const schedule of schedules) {
    // Each schedule starts from the same checkpoint, served as the policy's current version.
    engine?.child.kill();
    engine = await startEngine(sim.url, checkpoint, "raw_logprobs", version);
    await configureSim(sim.url, { engine: { costModel: costFor(schedule) } });
    const started = performance.now();
    const lines = await runTrainer(
      [
        ...common,
        ...[
          "--checkpoint",
          checkpoint,
          "--workdir",
          join(workdir, schedule),
          "--schedule",
          schedule,
        ],
        ...["--steps", String(steps), "--rows-per-step", String(values["rows-per-step"])],
        ...[
          "--n",
          String(values.n),
          "--lr",
          String(values.lr),
          "--series",
          `${series}-${schedule}`,
        ],
      ],
      (line) =>
        console.log(
          `${schedule} step ${line.step}: reward ${line.reward.toFixed(3)}, logprob max |Δ| ` +
            `${line.agreement_max.toExponential(2)} over ${line.tokens} tokens of ${line.samples} samples ` +
            `(${line.spanned} spanning two versions), generate ${line.generate_s.toFixed(1)} s, ` +
            `train ${line.train_s.toFixed(2)} s, sync ${line.sync_s.toFixed(2)} s`,
        ),
    );
    const wall = (performance.now() - started) / 1000;
    version = lines.at(-1)!.policy_version;
    const first = mean(lines.slice(0, 2).map((l) => l.reward));
    const last = mean(lines.slice(-2).map((l) => l.reward));
    learned &&= last - first >= 0.3;
    const syncs = lines.map((l) => l.sync_s).sort((a, b) => a - b);
    report.push(
      `${schedule}: reward: first 2 steps ${first.toFixed(3)}, last 2 steps ${last.toFixed(3)} ` +
        `(every step: ${lines.map((l) => l.reward.toFixed(2)).join(" ")})`,
      `${schedule}: logprob agreement: ${agreement(lines)} (raw_logprobs, temperature 1, fp32, each token under its recorded version's weights)`,
      `${schedule}: responses spanning two versions ${sum(lines, (l) => l.spanned)}; version mismatches: ${sum(lines, (l) => l.version_mismatches)}`,
      `${schedule}: trained tokens/s ${(sum(lines, (l) => l.tokens) / wall).toFixed(1)}, sync wait p50 ` +
        `${syncs[Math.floor(syncs.length / 2)]!.toFixed(2)} s max ${syncs.at(-1)!.toFixed(2)} s, wall ${wall.toFixed(0)} s`,
    );
  }

  // The probes: the starting policy (uncertain, so its log-probs are far from 0) at another
  // temperature, once per log-prob mode, no update.
  await configureSim(sim.url, { engine: { costModel: null } });
  const temperature = String(values["probe-temperature"]);
  const probes: string[] = [];
  for (const mode of ["processed_logprobs", "raw_logprobs"] as const) {
    engine?.child.kill();
    engine = await startEngine(sim.url, checkpoint, mode, version);
    const probe = await runTrainer([
      ...common,
      ...[
        "--checkpoint",
        checkpoint,
        "--workdir",
        join(workdir, mode),
        "--steps",
        "1",
        "--lr",
        "0",
      ],
      ...["--temperature", temperature, "--series", `${series}-${mode.split("_")[0]}`],
    ]);
    probes.push(`${mode} ${agreement(probe)}`);
  }
  for (const line of report) console.log(line);
  console.log(`logprob agreement at temperature ${temperature}: ${probes.join("; ")}`);
  if (!learned) process.exitCode = 1;
} finally {
  engine?.child.kill();
  await stack?.stop();
  await sim.stop();
  rmSync(workdir, { recursive: true, force: true });
}
