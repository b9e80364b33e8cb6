/**
 * @module `npm run bench:learn`: a real policy learns through edge-rollout. A small PyTorch
 * transformer (edge_rollout.learn) serves as the simulator's token source behind vLLM's wire; the
 * real local stack (Worker, gateway, feed) runs the `digits` agent; a GRPO trainer pulls complete
 * groups from the feed, recomputes every trained token's log-prob from `to_verl_batch`'s arrays,
 * steps its optimizer and syncs the weights (sync/begin, /update_weights_from_disk, sync/end).
 * Prints each step's reward and the log-prob agreement, then the summary lines.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import { startBenchStack } from "../bench-stack";
import { freePort } from "../../tools/simulator/free-port";
import { printedUrl, startSimulatorProcess } from "../simulator-process";
import { PYTHON_ROOT, digitsRows, outputIds, warmUp } from "./learn-setup";

const { values } = parseArgs({
  options: {
    steps: { type: "string", default: "24" },
    "rows-per-step": { type: "string", default: "16" },
    n: { type: "string", default: "8" },
    turns: { type: "string", default: "1" },
    lr: { type: "string", default: "0.003" },
    seed: { type: "string", default: "0" },
    "warmup-target": { type: "string", default: "0.3" },
  },
});
const steps = Number(values.steps);
const turns = Number(values.turns) === 2 ? 2 : 1;
const seed = Number(values.seed);

/** One step's line from the trainer. */
interface StepLine {
  step: number;
  reward: number;
  agreement_max: number;
  agreement_mean: number;
  tokens: number;
  version_mismatches: number;
  train_s: number;
  generate_s: number;
  sync_s: number;
}

const workdir = resolve(".tmp/learn-runs", `run-${process.pid}`);
mkdirSync(workdir, { recursive: true });
const children: ChildProcess[] = [];
const sim = await startSimulatorProcess({});
let stack: Awaited<ReturnType<typeof startBenchStack>> | null = null;
try {
  const out = await outputIds(sim.url);
  const probability = await warmUp(sim.url, workdir, out, seed, Number(values["warmup-target"]));
  const engine = spawn(
    "python3",
    [
      "-m",
      "edge_rollout.learn.engine_server",
      "--checkpoint",
      join(workdir, "policy-v0.pt"),
      "--port",
      "0",
    ],
    { cwd: PYTHON_ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  children.push(engine);
  const engineUrl = await printedUrl(engine);
  const configured = await fetch(`${sim.url}/sim/config`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ engine: { tokenSourceUrl: engineUrl } }),
  });
  if (!configured.ok) throw new Error(`configuring the simulator: ${await configured.text()}`);
  stack = await startBenchStack({
    kind: "miniflare",
    modelServerUrl: sim.url,
    port: await freePort(),
    stateDir: "learn",
  });
  const rows = digitsRows(turns, seed);
  writeFileSync(join(workdir, "rows.jsonl"), rows.map((row) => JSON.stringify(row)).join("\n"));
  const series = `learn-${turns}t-${Date.now()}`;
  console.log(
    `bench:learn: policy edge_rollout.learn.TinyPolicy (2 layers, dim 64, fp32, 1 thread), emits ${out.length} ids; ` +
      `warm-up answer probability ${probability.toFixed(3)}; ${steps} steps of ${values["rows-per-step"]} rows x n=${values.n}, ` +
      `${turns} turn(s), verl/hybrid, lr ${values.lr}; run page ${stack.workerUrl}/runs/${series}`,
  );
  const trainer = spawn(
    "python3",
    [
      "-m",
      "edge_rollout.learn.trainer",
      "--url",
      stack.workerUrl,
      "--model-url",
      sim.url,
      "--rows",
      join(workdir, "rows.jsonl"),
      "--checkpoint",
      join(workdir, "policy-v0.pt"),
      "--workdir",
      workdir,
      "--steps",
      String(steps),
      "--rows-per-step",
      String(values["rows-per-step"]),
      "--n",
      String(values.n),
      "--lr",
      String(values.lr),
      "--series",
      series,
    ],
    { cwd: PYTHON_ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  children.push(trainer);
  const lines: StepLine[] = [];
  const started = performance.now();
  for await (const text of createInterface({ input: trainer.stdout! })) {
    const line = JSON.parse(text) as StepLine;
    lines.push(line);
    console.log(
      `step ${line.step}: reward ${line.reward.toFixed(3)}, logprob max |Δ| ${line.agreement_max.toExponential(2)} ` +
        `over ${line.tokens} tokens of ${(line as unknown as { samples: number }).samples} samples, generate ${line.generate_s.toFixed(1)} s, train ${line.train_s.toFixed(2)} s, sync ${line.sync_s.toFixed(2)} s`,
    );
  }
  const code = await new Promise<number | null>((done) => {
    if (trainer.exitCode !== null) done(trainer.exitCode);
    else trainer.once("exit", done);
  });
  if (code !== 0 || lines.length === 0) throw new Error(`the trainer exited with ${code}`);
  const wall = (performance.now() - started) / 1000;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  const tokens = lines.reduce((sum, l) => sum + l.tokens, 0);
  const first = mean(lines.slice(0, 2).map((l) => l.reward));
  const last = mean(lines.slice(-2).map((l) => l.reward));
  console.log(
    `reward: first 2 steps ${first.toFixed(3)}, last 2 steps ${last.toFixed(3)} (every step: ${lines.map((l) => l.reward.toFixed(2)).join(" ")})`,
  );
  console.log(
    `logprob agreement: max |Δ| ${Math.max(...lines.map((l) => l.agreement_max)).toExponential(2)}, ` +
      `mean |Δ| ${(lines.reduce((s, l) => s + l.agreement_mean * l.tokens, 0) / tokens).toExponential(2)} over ${tokens} trained tokens ` +
      `(raw_logprobs at temperature 1, fp32)`,
  );
  console.log(`version mismatches: ${lines.reduce((s, l) => s + l.version_mismatches, 0)}`);
  console.log(
    `trained tokens/s ${(tokens / wall).toFixed(1)}, sync wait p50 ${[...lines.map((l) => l.sync_s)].sort((a, b) => a - b)[Math.floor(lines.length / 2)]!.toFixed(2)} s, ` +
      `wall ${wall.toFixed(0)} s`,
  );
  if (!(last - first >= 0.3)) process.exitCode = 1;
} finally {
  for (const child of children) child.kill();
  await stack?.stop();
  await sim.stop();
  rmSync(workdir, { recursive: true, force: true });
}
