/**
 * @module `npm run bench:loop`: N rollouts × 5 steps through edge-rollout on the local stack vs a
 * bare Node loop with the `openai` client, both against one simulator at a fixed latency, then a
 * profiled run that splits the Worker's CPU per step into phases.
 */
import { RolloutClient } from "../scripts/rollout-client";
import { runBareLoop } from "./bare-loop";
import { type BenchStack, type StackKind, startBenchStack } from "./bench-stack";
import { byMethodLine, formatObjectRequests, readObjectRequests } from "./object-requests";
import { startSimulatorProcess } from "./simulator-process";
import { profileSteps } from "./step-profile";
import { runWorkerdFloor } from "./workerd-floor";
import { commandLine } from "../scripts/command-line";

const values = commandLine({
  usage: "npm run bench:loop -- [options]",
  description: "N rollouts × steps through edge-rollout on the local stack vs a bare openai-client loop, against one simulator.",
  flags: {
    rollouts: { type: "string", default: "30", help: "rollouts (each a dialogue)" },
    steps: { type: "string", default: "5", help: "steps (model calls) per rollout" },
    "ttft-ms": { type: "string", default: "50", help: "simulator time to first token" },
    "per-token-ms": { type: "string", default: "1", help: "simulator time per generated token" },
    "max-tokens": { type: "string", default: "24", help: "max_tokens per call" },
    stack: { type: "string", default: "miniflare", help: "miniflare, wrangler, or both (side by side in this run)" },
    "profile-rollouts": { type: "string", default: "16", help: "rollouts in the profiled (untimed) run; 0 = none" },
    "skip-floor": { type: "boolean", default: false, help: "skip the workerd floor (the same calls from a bare Worker in workerd, with and without object round trips)" },
    port: { type: "string", default: "8797", help: "Worker port" },
  },
});
const rollouts = Number(values.rollouts);
const steps = Number(values.steps);
const maxTokens = Number(values["max-tokens"]);
const profileRollouts = Number(values["profile-rollouts"]);
const kinds: StackKind[] = values.stack === "both" ? ["wrangler", "miniflare"] : [values.stack as StackKind];
if (!kinds.every((k) => k === "miniflare" || k === "wrangler")) {
  console.error(`bench:loop: --stack must be miniflare, wrangler or both, got "${values.stack}"`);
  process.exit(2);
}
/** Work messages per local consumer batch: the consumer only hands rollouts to their sessions, so any size is fast. */
const LOCAL_BATCH = 100;

const simulator = await startSimulatorProcess(["--latency-ttft-ms", values["ttft-ms"], "--latency-per-token-ms", values["per-token-ms"], "--seed", "3"]);
const lines: string[] = [];
const config = { max_steps: steps, max_tokens_per_call: maxTokens };
const task = (i: number) => ({ problem: `Tell me about topic ${i}.`, extra_args: { turns: steps } });
const row = (label: string, ms: number, n: number) => `${label.padEnd(44)} ${(ms / 1000).toFixed(3).padStart(8)} s  ${(n / (ms / 1000)).toFixed(1).padStart(8)} steps/s`;
const oursMs = new Map<StackKind, number>();
const oursCpuPerStep = new Map<StackKind, number>();
/** Durable Object round trips per step in the floor's "objects" run: admission, release, step commit. */
const FLOOR_RPCS = 3;

/** One timed run of ours on `stack`, then (Miniflare) the profiled run. */
async function runOurs(stack: BenchStack): Promise<void> {
  const client = new RolloutClient(stack.workerUrl);
  // Warm-up: first requests compile code paths in workerd, open connections, wake the shards.
  await Promise.all([0, 1, 2, 3].map(async (i) => client.waitForEnd(await client.create({ agent: "dialogue", task: task(100_000 + i), config }))));
  const requestsBefore = await readObjectRequests(stack.workerUrl);
  const cpuBefore = stack.cpu();
  const start = performance.now();
  const ids = await Promise.all(Array.from({ length: rollouts }, (_, i) => client.create({ agent: "dialogue", task: task(i), config })));
  const ends = await Promise.all(ids.map((id) => client.waitForEnd(id, 20)));
  const wallMs = performance.now() - start;
  const cpuAfter = stack.cpu();
  const requestsAfter = await readObjectRequests(stack.workerUrl);
  const oursSteps = ends.reduce((n, end) => n + end.steps, 0);
  const failed = ends.filter((end) => end.status !== "succeeded").length;
  oursMs.set(stack.kind, wallMs);
  oursCpuPerStep.set(stack.kind, (cpuAfter.worker - cpuBefore.worker) / oursSteps);
  lines.push(row(`edge-rollout on ${stack.kind === "miniflare" ? "Miniflare's API" : "wrangler dev"}`, wallMs, oursSteps) + (failed ? `  (${failed} not succeeded)` : ""));
  lines.push(`  framework CPU per step (${stack.kind}): ${oursCpuPerStep.get(stack.kind)!.toFixed(2)} ms in the Worker's workerd (driver, sessions, shards; goal ≤ 2 ms)` +
    (stack.kind === "wrangler" ? `; wrangler dev's proxy and Node: ${((cpuAfter.tooling - cpuBefore.tooling) / oursSteps).toFixed(2)} ms (not in production)` : ""));
  for (const line of formatObjectRequests(requestsBefore, requestsAfter, oursSteps)) lines.push(`  ${line}`);
  lines.push(`  ${byMethodLine(requestsBefore, requestsAfter)}`);
  if (profileRollouts > 0 && stack.kind === "miniflare") lines.push(...(await profileSteps(stack, client, { rollouts: profileRollouts, steps, maxTokens, firstTopic: 200_000 })));
}

try {
  for (const [i, kind] of kinds.entries()) {
    const stack = await startBenchStack({ kind, modelServerUrl: simulator.url, port: Number(values.port) + i, stateDir: `bench-loop-${kind}`, localBatchSize: LOCAL_BATCH });
    try {
      await runOurs(stack);
    } catch (error) {
      // Side by side, one runner failing (wrangler dev's "Your worker restarted mid-request") is a result, not the end of the run.
      if (kinds.length === 1) throw error;
      lines.push(`edge-rollout on ${kind}: run failed: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`);
    } finally {
      await stack.stop();
    }
  }
  const bareCpu0 = process.cpuUsage();
  const bareStart = performance.now();
  const bareCalls = await runBareLoop(simulator.url, "sim-qwen3", { rollouts, steps, maxTokens, concurrency: rollouts });
  const bareMs = performance.now() - bareStart;
  const bareCpu = process.cpuUsage(bareCpu0);
  const floor = !values["skip-floor"] ? await runWorkerdFloor(simulator.url, "sim-qwen3", { rollouts, steps, maxTokens, concurrency: rollouts }, FLOOR_RPCS) : null;

  console.log(`bench:loop — ${rollouts} rollouts × ${steps} steps, simulator ttft ${values["ttft-ms"]} ms + ${values["per-token-ms"]} ms/token, max_tokens ${maxTokens}`);
  for (const line of lines) console.log(line);
  console.log(row(`bare openai loop, ${rollouts} concurrent`, bareMs, bareCalls));
  for (const [kind, ms] of oursMs) console.log(`ratio ours (${kind}) / bare (${rollouts} concurrent): ${(ms / bareMs).toFixed(2)}x  (issue 11 goal: ≤ 1.5x at 256 rollouts / ttft 100 ms, ≤ 1.3x at 30 / ttft 50 ms)`);
  console.log(`baseline CPU per step:  ${((bareCpu.user + bareCpu.system) / 1000 / bareCalls).toFixed(2)} ms (openai client in this process)`);
  if (floor) {
    console.log(row(`workerd floor: bare Worker, fetch only`, floor.fetchOnly.wallMs, floor.fetchOnly.calls) + `   ${floor.fetchOnly.cpuMsPerCall.toFixed(2)} ms workerd CPU/step`);
    console.log(row(`workerd floor: + ${FLOOR_RPCS} object RPCs/step`, floor.withObjects.wallMs, floor.withObjects.calls) + `   ${floor.withObjects.cpuMsPerCall.toFixed(2)} ms workerd CPU/step (one SQLite write per RPC)`);
    for (const [kind, cpu] of oursCpuPerStep) {
      console.log(`ours (${kind}) above the floor: ${(cpu - floor.withObjects.cpuMsPerCall).toFixed(2)} ms CPU/step over the bare Worker with ${FLOOR_RPCS} object RPCs; wall ${(oursMs.get(kind)! / floor.withObjects.wallMs).toFixed(2)}x of it`);
    }
  }
  console.log(
    "note: each rollout is driven in its own invocation (the queue consumer hands it to its session; the session's alarm calls the drive route " +
      "through the DRIVER service binding), so production's 6 outgoing connections per invocation apply per rollout, and locally every rollout advances at once.",
  );
} finally {
  await simulator.stop();
}
