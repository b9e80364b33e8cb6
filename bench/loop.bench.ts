/**
 * @module `npm run bench:loop`: N rollouts × 5 steps through edge-rollout on the local stack vs a
 * bare Node loop with the `openai` client, both against one simulator at a fixed latency.
 */
import { RolloutClient } from "../scripts/rollout-client";
import { startLocalStack } from "../scripts/local-stack";
import { runBareLoop } from "./bare-loop";
import { formatObjectRequests, readObjectRequests } from "./object-requests";
import { cpuDelta, treeCpuByName } from "./process-cpu";
import { startSimulatorProcess } from "./simulator-process";
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
    port: { type: "string", default: "8797", help: "Worker port" },
  },
});
const rollouts = Number(values.rollouts);
const steps = Number(values.steps);
const maxTokens = Number(values["max-tokens"]);
/** Work messages per local consumer batch: the consumer only hands rollouts to their sessions, so any size is fast. */
const LOCAL_BATCH = 100;

const simulator = await startSimulatorProcess(["--latency-ttft-ms", values["ttft-ms"], "--latency-per-token-ms", values["per-token-ms"], "--seed", "3"]);
const stack = await startLocalStack({ workerPort: Number(values.port), modelServerUrl: simulator.url, stateDir: ".tmp/bench-loop", localBatchSize: LOCAL_BATCH });
try {
  const client = new RolloutClient(stack.workerUrl);
  const config = { max_steps: steps, max_tokens_per_call: maxTokens };
  const task = (i: number) => ({ problem: `Tell me about topic ${i}.`, extra_args: { turns: steps } });
  // Warm-up: first requests compile code paths in workerd and open connections.
  await Promise.all([0, 1].map(async (i) => client.waitForEnd(await client.create({ agent: "dialogue", task: task(i), config }))));

  const requestsBefore = await readObjectRequests(stack.workerUrl);
  const cpuBefore = treeCpuByName(stack.wrangler.pid!);
  const oursStart = performance.now();
  const ids = await Promise.all(Array.from({ length: rollouts }, (_, i) => client.create({ agent: "dialogue", task: task(i), config })));
  const ends = await Promise.all(ids.map((id) => client.waitForEnd(id)));
  const oursMs = performance.now() - oursStart;
  const cpu = cpuDelta(cpuBefore, treeCpuByName(stack.wrangler.pid!));
  const requestsAfter = await readObjectRequests(stack.workerUrl);
  const workerdCpuMs = cpu.workerd ?? 0;
  const devProxyCpuMs = Object.entries(cpu).filter(([name]) => name !== "workerd").reduce((sum, [, ms]) => sum + ms, 0);
  const oursSteps = ends.reduce((n, end) => n + end.steps, 0);
  const failed = ends.filter((end) => end.status !== "succeeded").length;

  const shape = { rollouts, steps, maxTokens };
  const bareCpu0 = process.cpuUsage();
  const bareStart = performance.now();
  const bareCalls = await runBareLoop(simulator.url, "sim-qwen3", { ...shape, concurrency: rollouts });
  const bareMs = performance.now() - bareStart;
  const bareCpu = process.cpuUsage(bareCpu0);

  const line = (label: string, ms: number, n: number) => `${label.padEnd(44)} ${(ms / 1000).toFixed(3).padStart(8)} s  ${(n / (ms / 1000)).toFixed(1).padStart(8)} steps/s`;
  console.log(`bench:loop — ${rollouts} rollouts × ${steps} steps, simulator ttft ${values["ttft-ms"]} ms + ${values["per-token-ms"]} ms/token, max_tokens ${maxTokens}`);
  console.log(line("edge-rollout (wrangler dev, DO per rollout)", oursMs, oursSteps) + (failed ? `  (${failed} not succeeded)` : ""));
  console.log(line(`bare openai loop, ${rollouts} concurrent`, bareMs, bareCalls));
  console.log(`ratio ours / bare (${rollouts} concurrent): ${(oursMs / bareMs).toFixed(2)}x  (issue 11 goal: ≤ 1.5x at 256 rollouts / ttft 100 ms, ≤ 1.3x at 30 / ttft 50 ms)`);
  console.log(`framework CPU per step: ${(workerdCpuMs / oursSteps).toFixed(2)} ms in workerd, both workerd processes (the Worker's is the part production bills; goal ≤ 2 ms)`);
  console.log(`wrangler dev's Node processes (local proxy, not in production): ${(devProxyCpuMs / oursSteps).toFixed(2)} ms per step`);
  for (const line of formatObjectRequests(requestsBefore, requestsAfter, oursSteps)) console.log(line);
  console.log(`baseline CPU per step:  ${((bareCpu.user + bareCpu.system) / 1000 / bareCalls).toFixed(2)} ms (openai client in this process)`);
  console.log(
    "note: each rollout is driven in its own invocation (the queue consumer hands it to its session; the session's alarm calls the drive route " +
      "through the DRIVER service binding), so production's 6 outgoing connections per invocation apply per rollout, and locally every rollout advances at once.",
  );
} finally {
  await stack.stop();
  await simulator.stop();
}
