/**
 * @module `npm run bench:sampling`: what dynamic sampling (DAPO's filter) adds to a training step
 * over early stopping alone, on the real Worker against one simulator process whose success rate
 * varies per prompt (`--difficulty`, so some GRPO groups are uniform), whose answers have
 * heavy-tailed lengths (`--tail`) and whose engine times steps by the default cost curve (decode
 * slows as sequences are added). Three arms over the same rows, with the same outcomes (the
 * gateway's sample key `<row>:<sample>` seeds each member's answer and length):
 *
 * 1. plain: every row × n, every group (what a trainer gets without either);
 * 2. early-stop: the same batch with `target_groups`, no filter: done once that many groups are
 *    complete, the rest cancelled (the cut alone);
 * 3. filtered: the same batch with `target_groups` and `filter: {metric: "reward"}`: groups
 *    without reward spread dropped, sampling through the reserve rows until the target is met.
 *
 * A warm-up round of all three first (untimed), then `--repeats` rounds with the order rotated
 * each round. It prints per arm the wall time, groups delivered, groups with signal and tokens
 * generated (medians and min–max), `groups with signal per minute: plain X, early-stop Y,
 * filtered Z`, and what the filter adds over early stopping alone (filtered / early-stop, within
 * each round), and checks that every batch saw the same member rewards as the first plain one.
 */
import { evaluateArithmetic, formatNumber } from "../../src/agents/arithmetic";
import { createRng } from "../../tools/simulator";
import { commandLine, integerFlag } from "../../scripts/command-line";
import { startBenchStack } from "../kit/bench-stack";
import { type Arm, ARMS, armBatch, armOrder } from "./arms";
import { checkSameOutcomes } from "./same-outcomes";
import { batchLine, type Repeat, reportLines } from "./sampling-report";
import { type MathRow, runBatch, type SamplingOutcome } from "./sampling-runs";
import { startSimulatorProcess } from "../kit/simulator-process";

const flags = {
  rows: { type: "string", default: "48", help: "math rows of every arm's batch" },
  n: { type: "string", default: "8", help: "samples per row (the GRPO group size)" },
  target: {
    type: "string",
    default: "12",
    help: "target_groups of the early-stop and filtered arms (the rest of the rows are their reserve)",
  },
  "max-concurrent": { type: "string", default: "256", help: "max_concurrent of every batch" },
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
  "tail-max-tokens": { type: "string", default: "4096", help: "longest answer preamble, tokens" },
  "time-scale": {
    type: "string",
    default: "1",
    help: "wall time per modelled engine ms (the default cost curve: an 8B model on one H100); below 1 the Worker's share of the wall time grows",
  },
  repeats: { type: "string", default: "3", help: "timed rounds (the arms rotated each round)" },
  "warm-up": { type: "string", default: "1", help: "untimed rounds of all three arms first" },
  seed: { type: "string", default: "11", help: "simulator and row seed" },
  port: { type: "string", default: "8797", help: "Worker port" },
} as const;
const values = commandLine({
  usage: "npm run bench:sampling -- [options]",
  description:
    "Plain vs early-stop (target_groups) vs filtered (DAPO + target_groups) batches over the same rows and outcomes: groups with signal per minute, and what the filter adds over early stopping alone.",
  flags,
});
const rows = integerFlag("--rows", values.rows, 2, 2000);
const n = integerFlag("--n", values.n, 2, 64);
const target = integerFlag("--target", values.target, 1, rows);
const maxConcurrent = integerFlag("--max-concurrent", values["max-concurrent"], 1, 1000);
const repeats = integerFlag("--repeats", values.repeats, 1, 20);
const warmUp = integerFlag("--warm-up", values["warm-up"], 0, 5);
const seed = integerFlag("--seed", values.seed, 0);
const tailMaxTokens = integerFlag("--tail-max-tokens", values["tail-max-tokens"], 1);
const successRate = Number(values["success-rate"]);
const difficulty = Number(values.difficulty);
const timeScale = Number(values["time-scale"]);
if (!(successRate > 0 && successRate < 1)) throw new RangeError("--success-rate must be in (0, 1)");
if (!(difficulty > 0)) throw new RangeError("--difficulty must be > 0");
if (!(timeScale > 0)) throw new RangeError("--time-scale must be > 0");
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

console.log(
  `bench:sampling parameters: ${Object.keys(flags)
    .map((name) => `--${name} ${values[name as keyof typeof flags]}`)
    .join(" ")}`,
);
console.log(
  `real: the Worker on Miniflare's API (batches, gateway, grading, filter, cut, cancels). modelled: the policy (the simulator: per-prompt success rate ~ Beta(${difficulty}·${successRate}, ${difficulty}·${1 - successRate}), ${values.tail} answer lengths${values.tail === "none" ? "" : ` shape ${values["tail-shape"]} capped at ${tailMaxTokens} tokens`}, steps timed by the default cost curve at time scale ${timeScale}). every arm: ${rows} rows × n ${n}, max_concurrent ${maxConcurrent}; early-stop and filtered: target_groups ${target}. same sample keys, so the same outcomes, in every arm.`,
);

const tail =
  values.tail === "none"
    ? undefined
    : {
        distribution: values.tail as "pareto" | "lognormal",
        shape: Number(values["tail-shape"]),
        maxTokens: tailMaxTokens,
      };
const sim = await startSimulatorProcess({
  seed,
  successRate,
  difficulty,
  engine: { costModel: "default", timeScale },
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
const settings = { rows: mathRows(rows), n, target, maxConcurrent };
const stamp = Date.now().toString(36);
const others: Array<{ label: string; rewards: Map<string, number> }> = [];

async function run(arm: Arm, label: string): Promise<SamplingOutcome> {
  const batchId = `${arm}-${label.replace(/\s+/g, "-")}-${stamp}`;
  const outcome = await runBatch(stack.workerUrl, sim.url, armBatch(arm, batchId, settings));
  console.log(batchLine(`${label} ${arm}`, outcome));
  return outcome;
}

try {
  for (let round = 0; round < warmUp; round += 1)
    for (const arm of ARMS) {
      const outcome = await run(arm, `warm-up ${round + 1}`);
      others.push({ label: `warm-up ${round + 1} ${arm}`, rewards: outcome.rewards });
    }
  const timed: Repeat[] = [];
  for (let repeat = 0; repeat < repeats; repeat += 1) {
    const outcomes: Partial<Repeat> = {};
    for (const arm of armOrder(repeat)) {
      outcomes[arm] = await run(arm, `repeat ${repeat + 1}`);
      others.push({ label: `repeat ${repeat + 1} ${arm}`, rewards: outcomes[arm].rewards });
    }
    timed.push(outcomes as Repeat);
  }
  for (const line of reportLines(timed, target)) console.log(line);
  const reference = timed[0]!.plain.rewards;
  const check = checkSameOutcomes(
    reference,
    others.filter(({ rewards }) => rewards !== reference),
  );
  console.log(
    `same outcomes: ${check.compared} member rewards of ${check.batches} other batches compared with repeat 1 plain's (${reference.size} members), ${check.differing} differ${check.examples.length > 0 ? `: ${check.examples.join("; ")}` : ""}`,
  );
  // plain generates every member to its end, so equal token counts mean equal lengths too.
  const plainTokens = timed.map((repeat) => repeat.plain.engine.generationTokens);
  console.log(
    `same lengths: plain's tokens generated per repeat ${plainTokens.join(", ")} (${new Set(plainTokens).size === 1 ? "equal" : "DIFFER"})`,
  );
} finally {
  await stack.stop();
  await sim.stop();
}
