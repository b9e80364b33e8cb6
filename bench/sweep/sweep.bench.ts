/**
 * @module `npm run bench:sweep`: 64, 256 and 1024 concurrent rollouts × 5 steps through
 * edge-rollout on the local stack, each next to a bare `openai` loop with the same number of
 * conversations, one simulator at a fixed latency, all in one run. Prints wall ratio, steps/s,
 * efficiency against the ideal (the longest rollout's simulated latency / wall), workerd CPU per
 * step and the requests the policy object and the admission shards served per model call.
 */
import { cpus } from "node:os";
import { parseArgs } from "node:util";
import { RolloutClient } from "../../scripts/rollout-client";
import { type StackKind, startBenchStack } from "../kit/bench-stack";
import {
  byMethodLine,
  formatObjectRequests,
  readObjectRequests,
  requestsBetween,
} from "../kit/object-requests";
import { formatUsage, sessionUsage, sharedObjectUsage } from "../kit/object-usage";
import { startSimulatorProcess } from "../kit/simulator-process";
import { profileSteps } from "../kit/step-profile";
import { runBare, runOurs, type SweepShape } from "./sweep-shapes";
import { untilQuiet } from "../kit/process-cpu";

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "64,256,1024" },
    steps: { type: "string", default: "5" },
    "ttft-ms": { type: "string", default: "100" },
    "per-token-ms": { type: "string", default: "1" },
    "max-tokens": { type: "string", default: "24" },
    port: { type: "string", default: "8799" },
    stack: { type: "string", default: "miniflare" },
    "profile-rollouts": { type: "string", default: "16" },
    help: { type: "boolean", default: false },
  },
});
if (values.help) {
  console.log(
    "usage: npm run bench:sweep -- [--sizes 64,256,1024] [--steps 5] [--ttft-ms 100] [--per-token-ms 1] [--max-tokens 24] [--port 8799] [--stack miniflare|wrangler] [--profile-rollouts 16]",
  );
  process.exit(0);
}
const sizes = values.sizes.split(",").map(Number);
const base = {
  steps: Number(values.steps),
  maxTokens: Number(values["max-tokens"]),
  ttftMs: Number(values["ttft-ms"]),
  perTokenMs: Number(values["per-token-ms"]),
};
for (const [name, value] of Object.entries({ ...base, sizes: Math.min(...sizes) })) {
  if (
    !Number.isFinite(value) ||
    value < 0 ||
    (name !== "ttftMs" && name !== "perTokenMs" && value < 1)
  ) {
    console.error(`bench:sweep: --${name} is not a valid number`);
    process.exit(2);
  }
}

const simulator = await startSimulatorProcess([
  "--latency-ttft-ms",
  values["ttft-ms"],
  "--latency-per-token-ms",
  values["per-token-ms"],
  "--seed",
  "3",
]);
const kind = values.stack as StackKind;
if (kind !== "miniflare" && kind !== "wrangler") {
  console.error(`bench:sweep: --stack must be miniflare or wrangler, got "${values.stack}"`);
  process.exit(2);
}
const stack = await startBenchStack({
  kind,
  port: Number(values.port),
  modelServerUrl: simulator.url,
  stateDir: "bench-sweep",
  localBatchSize: 100,
  verbose: process.env.BENCH_VERBOSE === "1",
}).catch(async (error: unknown) => {
  await simulator.stop();
  throw error;
});
try {
  const client = new RolloutClient(stack.workerUrl);
  const workerCpu = () => stack.cpu().worker;
  // Warm-up: compiles the Worker's code paths and wakes the policy object and every shard.
  await runOurs(client, { ...base, rollouts: 16 }, 900_000);

  const rows: string[] = [];
  const details: string[] = [];
  let topic = 0;
  for (const n of sizes) {
    const shape: SweepShape = { ...base, rollouts: n };
    const requestsBefore = await readObjectRequests(stack.workerUrl);
    const cpu0 = workerCpu();
    const ours = await runOurs(client, shape, topic);
    // The CPU the rollouts caused, including publications still running after their end events.
    await untilQuiet(workerCpu);
    const cpuMs = workerCpu() - cpu0;
    const requestsAfter = await readObjectRequests(stack.workerUrl);
    // Read first: session counters live in memory, and workerd evicts idle objects within seconds.
    const usage = formatUsage(
      await sessionUsage(client, ours.ids),
      sharedObjectUsage(requestsBetween(requestsBefore, requestsAfter)),
      ours.steps,
      base.steps,
    );
    // Outside the timed and CPU-counted window: the recorded calls give each rollout's simulated latency.
    ours.idealMs = await ours.readIdealMs();
    const bare = await runBare(simulator.url, shape, topic);
    topic += n;
    const perS = (steps: number, ms: number) => (steps / (ms / 1000)).toFixed(0);
    const eff = (ideal: number, ms: number) => `${((100 * ideal) / ms).toFixed(0)}%`;
    rows.push(
      [
        String(n).padStart(6),
        `${(ours.wallMs / 1000).toFixed(2)} s`.padStart(10),
        `${(bare.wallMs / 1000).toFixed(2)} s`.padStart(10),
        `${(ours.wallMs / bare.wallMs).toFixed(2)}x`.padStart(8),
        perS(ours.steps, ours.wallMs).padStart(9),
        perS(bare.steps, bare.wallMs).padStart(9),
        eff(ours.idealMs, ours.wallMs).padStart(8),
        eff(bare.idealMs, bare.wallMs).padStart(8),
        (cpuMs / Math.max(1, ours.steps)).toFixed(2).padStart(9),
        `${ours.notSucceeded}`.padStart(6),
      ].join(""),
    );
    details.push(
      `  ${n} rollouts: ` +
        formatObjectRequests(requestsBefore, requestsAfter, ours.steps).join("; "),
      `    ${byMethodLine(requestsBefore, requestsAfter)}`,
      ...usage.map((line) => `    ${line}`),
    );
  }
  const profile =
    Number(values["profile-rollouts"]) > 0
      ? await profileSteps(stack, client, {
          rollouts: Number(values["profile-rollouts"]),
          steps: base.steps,
          maxTokens: base.maxTokens,
          firstTopic: 500_000,
        })
      : [];
  console.log(
    `bench:sweep (${kind === "miniflare" ? "Miniflare's API" : "wrangler dev"}) — N concurrent rollouts × ${base.steps} steps vs a bare openai loop with N conversations, one simulator (ttft ${base.ttftMs} ms + ${base.perTokenMs} ms/token, max_tokens ${base.maxTokens}), ${cpus().length} CPUs`,
  );
  console.log(
    [
      "     N",
      "ours wall".padStart(10),
      "bare wall".padStart(10),
      "ratio".padStart(8),
      "ours st/s".padStart(9),
      "bare st/s".padStart(9),
      "ours eff".padStart(8),
      "bare eff".padStart(8),
      "CPU ms/st".padStart(9),
      "failed".padStart(6),
    ].join(""),
  );
  for (const row of rows) console.log(row);
  console.log("requests to the policy object and the admission shards, from their own counters:");
  for (const line of details) console.log(line);
  for (const line of profile) console.log(line);
  console.log(
    [
      "eff = the longest rollout's simulated latency (Σ ttft + per_token × completion tokens over its calls) / wall: 100% is a run with no overhead at all.",
      `CPU ms/st = CPU of the workerd process that runs the Worker, its sessions and shards (${kind === "wrangler" ? "wrangler's proxy workerd and Node excluded" : "no proxy: Miniflare's API"}) / steps, from /proc at 10 ms ticks.`,
      "each rollout is driven in its own invocation (session alarm → DRIVER service binding), so production's 6 connections per invocation apply per rollout;",
      "locally everything (simulator, workerd, this client) shares the same CPUs, and every object runs on workerd's one thread, so the larger points are CPU-bound on a small machine.",
    ].join("\n"),
  );
} finally {
  await stack.stop();
  await simulator.stop();
}
