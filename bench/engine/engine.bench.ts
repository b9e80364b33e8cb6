/**
 * @module `npm run bench:engine`: the simulator's engine as a client sees it over HTTP (the
 * simulator in its own process, the real `openai` client streaming): tokens per second and
 * preemptions at concurrency 1, 8, 32 and 128 under the default step cost curve and KV cache, the
 * knee where the cache starts preempting, whether a keyed re-run gets the same tokens, and the
 * simulator's CPU per generated token. Modelled: the step times (the cost curve below, not a GPU),
 * so tokens/s is tokens over modelled engine time; wall time is printed beside it.
 */
import { parseArgs } from "node:util";
import { describeStepCost } from "../../tools/simulator/engine/cost-model";
import { DEFAULT_STEP_COST } from "../../tools/simulator/engine/default-step-cost";
import { resolveOptions } from "../../tools/simulator/options";
import { SimulatorStats } from "../../tools/simulator/stats";
import { treeCpuByName } from "../kit/process-cpu";
import { startSimulatorProcess } from "../kit/simulator-process";
import { type CallResult, type WorkloadShape, runCalls } from "./engine-workload";

const { values } = parseArgs({
  options: {
    "output-tokens": { type: "string", default: "1280" },
    "prompt-words": { type: "string", default: "2048" },
    "time-scale": { type: "string", default: "0.25" },
  },
});
// Fixed before the run: a ~3.3k-token context per call needs ~208 blocks of 16, so the default
// 24,576 blocks hold ~118 calls at once: 128 must preempt, 32 must not.
const shape: WorkloadShape = {
  promptWords: Number(values["prompt-words"]),
  outputTokens: Number(values["output-tokens"]),
};
const CONCURRENCIES = [1, 8, 32, 128];
const timeScale = Number(values["time-scale"]);
const defaults = resolveOptions({}).prefixCache;

async function stats(url: string): Promise<SimulatorStats> {
  return SimulatorStats.parse(await (await fetch(`${url}/sim/stats`)).json());
}

const sim = await startSimulatorProcess({ engine: { costModel: "default", timeScale } });
const cpuMs = () => Object.values(treeCpuByName(sim.child.pid!)).reduce((a, b) => a + b, 0);
try {
  console.log(`bench:engine: ${describeStepCost({ ...DEFAULT_STEP_COST })}`);
  console.log(
    `  KV cache ${defaults.capacityBlocks} blocks of ${defaults.blockSize} tokens; max_num_seqs 256, ` +
      `max_num_batched_tokens 8192, chunked prefill; each call: ~${shape.promptWords}-token prompt of its own, ` +
      `${shape.outputTokens} tokens with ignore_eos; n = concurrency calls per row; time scale ${timeScale}`,
  );
  let firstPreempting: number | null = null;
  let lastClean = 0;
  let keyed: CallResult[] = [];
  let tokensAll = 0;
  let cpuAll = 0;
  /** One row: `c` calls at once; answers whether the cache preempted. */
  const row = async (c: number, label: string): Promise<boolean> => {
    const before = (await stats(sim.url)).replica!;
    const cpu0 = cpuMs();
    const wall0 = performance.now();
    const results = await runCalls(sim.url, shape, c, c, `bench-${c}-`);
    const wall = (performance.now() - wall0) / 1000;
    const after = (await stats(sim.url)).replica!;
    const tokens = results.reduce((sum, r) => sum + r.ids.length, 0);
    const engineS = (after.engineMs - before.engineMs) / 1000;
    const preemptions = after.preemptions - before.preemptions;
    tokensAll += tokens;
    cpuAll += cpuMs() - cpu0;
    if (c === 32) keyed = results;
    console.log(
      `${label}concurrency ${c}: tokens/s ${(tokens / engineS).toFixed(0)}, preemptions ${preemptions}` +
        `  (modelled ${engineS.toFixed(1)} s, wall ${wall.toFixed(1)} s, ${tokens} tokens)`,
    );
    return preemptions > 0;
  };
  for (const c of CONCURRENCIES) {
    if (await row(c, "")) firstPreempting ??= c;
    else if (firstPreempting === null) lastClean = c;
  }
  // The knee, by bisection between the last row that did not preempt and the first that did.
  while (firstPreempting !== null && firstPreempting - lastClean > 4) {
    const probe = Math.round((lastClean + firstPreempting) / 2);
    if (await row(probe, "  knee probe: ")) firstPreempting = probe;
    else lastClean = probe;
  }
  const blocksPerCall = Math.ceil(
    (shape.promptWords + 8 + shape.outputTokens) / defaults.blockSize,
  );
  console.log(
    `knee: the KV cache starts preempting between concurrency ${lastClean} and ${firstPreempting}` +
      ` (the cache holds ~${Math.floor(defaults.capacityBlocks / blocksPerCall)} such calls at ~${blocksPerCall} blocks each)`,
  );
  // The 32 keyed calls again, now beside 96 unkeyed ones: other batches, other arrival order, preemption.
  const [again] = await Promise.all([
    runCalls(sim.url, shape, 32, 32, "bench-32-"),
    runCalls(sim.url, shape, 96, 96, null, 1000),
  ]);
  const same = again.every((r, i) => JSON.stringify(r.ids) === JSON.stringify(keyed[i]!.ids));
  const unkeyed = await runCalls(sim.url, shape, 4, 4, null);
  const unkeyedSame = unkeyed.every(
    (r, i) => JSON.stringify(r.ids) === JSON.stringify(keyed[i]!.ids),
  );
  console.log(
    `keyed re-run identical: ${same ? "yes" : "no"} (unkeyed calls of the same prompts identical: ${unkeyedSame ? "yes" : "no"})`,
  );
  console.log(
    `simulator CPU per generated token: ${((cpuAll * 1000) / tokensAll).toFixed(1)} µs (${tokensAll} tokens, ${(cpuAll / 1000).toFixed(1)} s CPU)`,
  );
  if (!same) process.exitCode = 1;
} finally {
  await sim.stop();
}
