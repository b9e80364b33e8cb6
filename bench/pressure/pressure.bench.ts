/**
 * @module `npm run bench:pressure`: rollouts in flight fixed, or following KV pressure, on a
 * multi-turn workload whose contexts grow, against the simulator's engine (its own process, a KV
 * cache small enough to fill and preempt). Measured in-process: the dispatcher here applies the
 * controller's own rule (src/runtime/pressure/pressure-rule.ts) to the simulator's real
 * `/metrics` over HTTP; the Worker, its objects and the trackers' 5 s share pull are not in the
 * loop (on 2 shared cores the local Worker's per-call CPU would set the pace of both arms, not the
 * engine's KV cache; the objects' wiring is shown by test/integration/runtime/policy/pressure-control.integration.test.ts).
 * Modelled: step times (the cost curve printed below, not a GPU), tool time (`envMs`, wall).
 */
import { parseArgs } from "node:util";
import { describeStepCost } from "../../tools/simulator/engine/cost-model";
import { DEFAULT_STEP_COST } from "../../tools/simulator/engine/default-step-cost";
import { PressureConfig } from "../../src/schemas/pressure";
import { median } from "../kit/latency-table";
import { startSimulatorProcess } from "../kit/simulator-process";
import {
  type ArmResult,
  type Control,
  runArm,
  SAMPLE_MS,
  tokenPool,
  type Workload,
} from "./pressure-workload";

const { values } = parseArgs({
  options: {
    rollouts: { type: "string", default: "96" },
    turns: { type: "string", default: "8" },
    repeats: { type: "string", default: "3" },
    "time-scale": { type: "string", default: "0.25" },
    prompt: { type: "string", default: "1024" },
    output: { type: "string", default: "64" },
    observation: { type: "string", default: "512" },
  },
});
// Fixed before the run: an agentic episode, short actions and long observations. A rollout
// starts at 1,024 + 64 tokens (68 blocks of 16) and ends at 1,024 + 8 × (64 + 512) = 5,632 (352
// blocks): the fixed arm's 32 fit the cache at the start (32 × 68 = 2,176 blocks), 6 at the end.
const workload: Workload = {
  rollouts: Number(values.rollouts),
  turns: Number(values.turns),
  promptTokens: Number(values.prompt),
  outputTokens: Number(values.output),
  observationTokens: Number(values.observation),
  envMs: 100,
};
const BLOCK_SIZE = 16;
const FIXED = 32;
const CAPACITY_BLOCKS =
  FIXED * Math.ceil((workload.promptTokens + workload.outputTokens) / BLOCK_SIZE);
const timeScale = Number(values["time-scale"]);
const repeats = Number(values.repeats);
// The controller as deployed, but sampled every 250 ms (the least period_ms allows): a run lasts
// seconds here, where a production rollout lasts minutes against the default 2 s period.
const pressureConfig = PressureConfig.parse({
  enabled: true,
  period_ms: SAMPLE_MS,
  min_concurrency: 1,
});
const arms: Record<"fixed" | "pressure", Control> = {
  fixed: { kind: "fixed", concurrency: FIXED },
  pressure: { kind: "pressure", config: pressureConfig, ceiling: FIXED },
};

function spread(values: number[], digits: number): string {
  return `${median(values).toFixed(digits)} [${Math.min(...values).toFixed(digits)}–${Math.max(...values).toFixed(digits)}]`;
}

const sim = await startSimulatorProcess({
  seed: 7,
  prefixCache: { blockSize: BLOCK_SIZE, capacityBlocks: CAPACITY_BLOCKS },
  engine: { costModel: "default", timeScale, maxNumSeqs: 256 },
});
try {
  console.log(`bench:pressure (in-process controller against the simulator's engine over HTTP)`);
  console.log(`  engine: ${describeStepCost({ ...DEFAULT_STEP_COST })}; time scale ${timeScale}`);
  console.log(
    `  KV cache: ${CAPACITY_BLOCKS} blocks of ${BLOCK_SIZE} tokens; preemption: vLLM V1 recompute ` +
      `(the newest running sequence gives up its blocks and re-prefills later); max_num_seqs 256, ` +
      `max_num_batched_tokens 8192, chunked prefill, finished turns' blocks kept as prefix cache`,
  );
  console.log(
    `  workload: ${workload.rollouts} rollouts × ${workload.turns} turns; prompt ${workload.promptTokens}, ` +
      `${workload.outputTokens} tokens a call (ignore_eos), +${workload.observationTokens}-token observation ` +
      `and ${workload.envMs} ms of tool time after each call`,
  );
  console.log(
    `  fixed: ${FIXED} in flight (fits the cache at the start); pressure: the rule with high_water ` +
      `${pressureConfig.high_water}, low_water ${pressureConfig.low_water}, overload_samples ` +
      `${pressureConfig.overload_samples}, sampled every ${pressureConfig.period_ms} ms, between 1 and ${FIXED}`,
  );
  const pool = await tokenPool(sim.url);
  const results: Record<string, ArmResult[]> = { fixed: [], pressure: [] };
  for (let r = 0; r < repeats; r++) {
    // Alternated, so drift on a shared machine falls on both arms.
    const order = r % 2 === 0 ? (["fixed", "pressure"] as const) : (["pressure", "fixed"] as const);
    for (const arm of order) {
      const result = await runArm(sim.url, workload, pool, arms[arm], `${arm}-${r}`);
      results[arm]!.push(result);
      console.log(
        `  repeat ${r + 1} ${arm.padEnd(8)}: ${result.rolloutsPerS.toFixed(2)} rollouts/s, ` +
          `${result.preemptions} preemptions, p90 call ${result.p90CallMs.toFixed(0)} ms, ` +
          `${result.requeued} requeued, mean limit ${result.meanLimit.toFixed(1)}, mean in flight ${result.meanInFlight.toFixed(1)} (${result.seconds.toFixed(1)} s)`,
      );
    }
  }
  for (const arm of ["fixed", "pressure"] as const) {
    const runs = results[arm]!;
    console.log(
      `${arm.padEnd(8)}: rollouts/s ${spread(
        runs.map((x) => x.rolloutsPerS),
        2,
      )}, preemptions ${spread(
        runs.map((x) => x.preemptions),
        0,
      )}, p90 call ms ${spread(
        runs.map((x) => x.p90CallMs),
        0,
      )}, requeued ${spread(
        runs.map((x) => x.requeued),
        0,
      )}  (median [min–max] over ${repeats})`,
    );
  }
  const ratios = results.pressure!.map((p, i) => p.rolloutsPerS / results.fixed![i]!.rolloutsPerS);
  console.log(
    `pressure / fixed rollouts/s: ${median(ratios).toFixed(2)} (per repeat: ${ratios.map((x) => x.toFixed(2)).join(", ")})`,
  );
} finally {
  await sim.stop();
}
