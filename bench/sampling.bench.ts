/**
 * @module `npm run bench:sampling`: what dynamic sampling (DAPO) and over-sampling do for a
 * training step, on the real Worker against one simulator process whose success rate varies per
 * prompt (`--difficulty`, so some GRPO groups are uniform) and whose answers have heavy-tailed
 * lengths (`--tail`). In one run, over the same math rows:
 *
 * 1. plain: every row × n, no filter (what a trainer gets today);
 * 2. filtered: the same rows with `filter: {metric: "reward"}` and `target_groups`: groups without
 *    signal are dropped and sampling continues through the rows until the target is met;
 * 3. the long tail: a batch of exactly `target` rows vs `target + extra` rows with `target_groups:
 *    target` (over-sampling), no filter: the wall time until `target` groups are complete.
 *
 * It prints the share of uniform groups, `groups with signal per minute: plain X, filtered Y`, and
 * the wall times to `target` groups with and without over-sampling.
 */
import { evaluateArithmetic, formatNumber } from "../src/agents/arithmetic";
import { createRng } from "../tools/simulator";
import { commandLine, integerFlag } from "../scripts/command-line";
import { startBenchStack } from "./bench-stack";
import { type MathRow, runBatch, type SamplingOutcome } from "./sampling-runs";
import { startSimulatorProcess } from "./simulator-process";

const values = commandLine({
  usage: "npm run bench:sampling -- [options]",
  description:
    "Plain vs filtered (DAPO) vs over-sampled batches over the same rows: uniform groups, groups with signal per minute, wall time to target_groups under a length tail.",
  flags: {
    rows: { type: "string", default: "48", help: "math rows of the plain and filtered batches" },
    n: { type: "string", default: "8", help: "samples per row (the GRPO group size)" },
    target: {
      type: "string",
      default: "12",
      help: "target_groups of the filtered and over-sampled batches",
    },
    extra: {
      type: "string",
      default: "4",
      help: "reserve rows of the over-sampled batch (target + extra)",
    },
    "success-rate": { type: "string", default: "0.5", help: "the simulator's mean success rate" },
    difficulty: {
      type: "string",
      default: "1",
      help: "per-prompt Beta concentration: small makes many prompts always or never solved",
    },
    tail: {
      type: "string",
      default: "pareto",
      help: "response length tail: pareto, lognormal or none",
    },
    "tail-shape": { type: "string", default: "1.5", help: "pareto alpha or lognormal sigma" },
    "per-token-ms": { type: "string", default: "2", help: "simulator time per generated token" },
    seed: { type: "string", default: "11", help: "simulator and row seed" },
    port: { type: "string", default: "8797", help: "Worker port" },
  },
});
const rows = integerFlag("--rows", values.rows, 2, 2000);
const n = integerFlag("--n", values.n, 2, 64);
const target = integerFlag("--target", values.target, 1, rows);
const extra = integerFlag("--extra", values.extra, 1, 1000);
const seed = integerFlag("--seed", values.seed, 0);
const successRate = Number(values["success-rate"]);
const difficulty = Number(values.difficulty);
if (!(successRate > 0 && successRate < 1)) throw new RangeError("--success-rate must be in (0, 1)");
if (!(difficulty > 0)) throw new RangeError("--difficulty must be > 0");
if (!["pareto", "lognormal", "none"].includes(values.tail))
  throw new RangeError("--tail must be pareto, lognormal or none");

function mathRows(count: number): MathRow[] {
  const random = createRng(seed).next;
  const term = () => 2 + Math.floor(random() * 48);
  return Array.from({ length: count }, (_, index) => {
    const expression = `${term()} * ${term()} + ${term()}`;
    return {
      prompt: `What is ${expression}?`,
      reward_model: { ground_truth: formatNumber(evaluateArithmetic(expression)) },
      extra_info: { index },
    };
  });
}

const tail =
  values.tail === "none"
    ? undefined
    : { distribution: values.tail as "pareto" | "lognormal", shape: Number(values["tail-shape"]) };
const sim = await startSimulatorProcess({
  seed,
  successRate,
  difficulty,
  latency: { ttftMs: 20, perTokenMs: Number(values["per-token-ms"]) },
  ...(tail ? { tail } : {}),
});
const stack = await startBenchStack({
  kind: "miniflare",
  port: Number(values.port),
  modelServerUrl: sim.url,
  stateDir: "bench-sampling",
}).catch(async (error: unknown) => {
  await sim.stop();
  throw error;
});
const all = mathRows(rows + extra);
const stamp = Date.now().toString(36);
const common = { agent: "math", n, mode: "train", max_concurrent: 256 };
try {
  console.log(
    `bench:sampling: ${rows} math rows × n ${n}; simulator success rate ${successRate} with per-prompt difficulty κ ${difficulty}, tail ${values.tail}${tail ? ` (shape ${tail.shape})` : ""}, ${values["per-token-ms"]} ms/token; target_groups ${target}, over-sampling +${extra} rows; the real Worker on Miniflare's API`,
  );
  const plain = await runBatch(stack.workerUrl, "plain", {
    ...common,
    batch_id: `plain-${stamp}`,
    rows: all.slice(0, rows),
  });
  const filtered = await runBatch(stack.workerUrl, "filtered", {
    ...common,
    batch_id: `filtered-${stamp}`,
    rows: all.slice(0, rows),
    target_groups: target,
    filter: { metric: "reward" },
  });
  const exact = await runBatch(stack.workerUrl, "exact", {
    ...common,
    batch_id: `exact-${stamp}`,
    rows: all.slice(0, target),
  });
  const over = await runBatch(stack.workerUrl, "over-sampled", {
    ...common,
    batch_id: `over-${stamp}`,
    rows: all.slice(0, target + extra),
    target_groups: target,
  });
  report(plain, filtered, exact, over);
} finally {
  await stack.stop();
  await sim.stop();
}

function perMinute(groups: number, wallMs: number): number {
  return groups / (wallMs / 60_000);
}

function report(
  plain: SamplingOutcome,
  filtered: SamplingOutcome,
  exact: SamplingOutcome,
  over: SamplingOutcome,
): void {
  const complete = plain.signalGroups + plain.uniformGroups;
  const uniformShare = complete === 0 ? 0 : plain.uniformGroups / complete;
  const plainRate = perMinute(plain.signalGroups, plain.wallMs);
  const filteredRate = perMinute(filtered.progress.groups.delivered, filtered.wallMs);
  const s = (ms: number) => (ms / 1000).toFixed(1);
  console.log(
    `plain: ${complete} groups complete, ${plain.uniformGroups} uniform, ${plain.signalGroups} with signal, ${s(plain.wallMs)} s`,
  );
  console.log(
    `filtered: ${filtered.progress.groups.delivered} delivered of target ${target}, ${filtered.progress.groups.filtered} filtered (no signal), ${filtered.progress.groups.cut} cut, ${filtered.progress.counts.cancelled} rollouts cut, ${filtered.progress.released} of ${rows * n} released, ${s(filtered.wallMs)} s`,
  );
  console.log(`share of uniform groups (plain): ${(uniformShare * 100).toFixed(1)}%`);
  console.log(
    `groups with signal per minute: plain ${plainRate.toFixed(1)}, filtered ${filteredRate.toFixed(1)} (ratio ${(filteredRate / Math.max(plainRate, 1e-9)).toFixed(2)})`,
  );
  console.log(
    `signal share of delivered groups: plain ${(complete === 0 ? 0 : (plain.signalGroups / complete) * 100).toFixed(1)}%, filtered 100.0% (every group the trainer gets has reward spread)`,
  );
  console.log(
    `wall time to ${target} complete groups under the ${values.tail} tail: without over-sampling ${s(exact.wallMs)} s, with over-sampling (+${extra} rows, ${over.progress.groups.cut} groups cut) ${s(over.wallMs)} s (ratio ${(exact.wallMs / over.wallMs).toFixed(2)})`,
  );
}
