/**
 * @module `npm run bench:drain -- --from-worker`: the drain end to end from a real local stack.
 * Publishes `--groups` × `--n` external rollouts of one long model call each through the real
 * sink (session → R2 + queue → results consumer → feed, packed per group), then has the Python
 * client drain the batch (`bench/drain_worker_bench.py`): pull → padded arrays, Arrow and JSON,
 * against the bare-Worker floor serving the same bytes. Loopback only, bounded.
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { benchStateDir, startBenchStack } from "./bench-stack";
import { startDrainFloor } from "./drain-floor";
import { publishDrainGroups, sizedProblem, untilGroupsReady } from "./drain-publish";
import { startSimulatorProcess } from "./simulator-process";

/** The flags `bench:drain` passes on. */
export interface DrainWorkerOptions {
  groups: number;
  n: number;
  promptTokens: number;
  responseTokens: number;
  promptLength: number;
  responseLength: number;
  rounds: number;
  python: string;
  port: number;
  vars: Record<string, string>;
}

async function runPython(python: string, args: string[]): Promise<number> {
  const child = spawn(python, ["bench/drain_worker_bench.py", ...args], { cwd: resolve(import.meta.dirname, ".."), stdio: "inherit" });
  // Bounded: a stuck child is killed rather than left running.
  const guard = setTimeout(() => child.kill("SIGKILL"), 900_000);
  const code = await new Promise<number>((done) => {
    child.once("error", (error) => {
      console.error(`bench:drain needs ${python} with numpy and pyarrow (clients/python): ${error.message}`);
      done(1);
    });
    child.once("exit", (exitCode) => done(exitCode ?? 1));
  });
  clearTimeout(guard);
  return code;
}

/** Runs the whole bench; resolves with the exit code. */
export async function runDrainFromWorker(options: DrainWorkerOptions): Promise<number> {
  const simulator = await startSimulatorProcess(["--seed", "3"]);
  const stack = await startBenchStack({ kind: "miniflare", modelServerUrl: simulator.url, port: options.port, stateDir: "bench-drain", vars: options.vars });
  const floor = await startDrainFloor(benchStateDir("drain-floor"));
  try {
    const batchId = `drain-${Date.now()}`;
    const problem = await sizedProblem(simulator.url, options.promptTokens);
    const cpu0 = stack.cpu().worker;
    const published = await publishDrainGroups(stack.workerUrl, problem, { batchId, groups: options.groups, n: options.n, promptTokens: options.promptTokens, responseTokens: options.responseTokens, concurrency: 32 });
    const settleMs = await untilGroupsReady(stack.workerUrl, batchId, options.groups);
    const cpuMs = stack.cpu().worker - cpu0;
    console.log(`bench:drain --from-worker — ${options.groups} groups × ${options.n} samples of ~${options.promptTokens} + ${options.responseTokens} tokens, ` +
      `published through the real sink in ${(published.wallMs / 1000).toFixed(1)} s (+${(settleMs / 1000).toFixed(1)} s until every group was ready); ` +
      `workerd CPU for publication, ingestion and packing: ${(cpuMs / published.rollouts).toFixed(2)} ms/rollout${options.vars.FEED_GROUP_PACKS === "off" ? " (group packs off)" : ""}`);
    const args = ["--url", stack.workerUrl, "--floor-url", floor.url, "--batch-id", batchId, "--samples", String(options.groups * options.n),
      "--groups-per-pull", "256", "--prompt-length", String(options.promptLength), "--response-length", String(options.responseLength),
      "--rounds", String(options.rounds), "--arrow-lease-ms", "4000", "--json-lease-ms", "20000"];
    return await runPython(options.python, args);
  } finally {
    await floor.stop();
    await stack.stop();
    await simulator.stop();
  }
}
