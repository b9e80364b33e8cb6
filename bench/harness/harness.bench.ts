/**
 * @module `npm run bench:harness`: agent harnesses as rollouts, end to end on the local stack. The
 * real Claude Code, Codex and opencode CLIs (pinned, installed under .tmp/harness-clis by
 * scripts/install-harness-clis.sh) each run a batch of Harbor-layout tasks (examples/harness-tasks)
 * × n, one workspace and one CLI per rollout, through the Python harness runner; their model calls
 * go through the Worker's gateway (Messages, Responses, chat) to the simulator, which answers from
 * each request's own tool list with a task's oracle or a wrong attempt at a seeded success rate.
 * Printed per harness: rollouts, reward mean (against the simulator's rate), drift splits (samples
 * beyond one per rollout), calls recorded by the gateway vs calls the harness logged itself, and
 * rollouts per second; then the runner's CPU (runner + CLIs) per rollout. What is modelled: the
 * policy (the simulator's scripted answers); everything else is the real part.
 */
import { existsSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { startBenchStack } from "../kit/bench-stack";
import { freePort } from "../../tools/simulator/free-port";
import { startSimulatorProcess } from "../kit/simulator-process";
import { turnCpu } from "./turn-cpu";
import {
  ROOT,
  TASKS,
  pullGroups,
  readBatch,
  runRunner,
  submitBatch,
  taskRows,
} from "./harness-run";

const { values } = parseArgs({
  options: {
    harnesses: { type: "string", default: "claude-code,codex,opencode" },
    tasks: { type: "string", default: "8" },
    "tasks-dir": { type: "string", default: TASKS },
    "task-ids": { type: "string" },
    n: { type: "string", default: "4" },
    runners: { type: "string", default: "6" },
    "success-rate": { type: "string", default: "0.7" },
    seed: { type: "string", default: "7" },
  },
});
const harnesses = String(values.harnesses).split(",");
const n = Number(values.n);
const rate = Number(values["success-rate"]);

for (const harness of harnesses) {
  if (existsSync(resolve(ROOT, ".tmp/harness-clis", harness, ".installed"))) continue;
  const install = spawnSync("bash", ["scripts/install-harness-clis.sh", harness], {
    cwd: ROOT,
    stdio: "inherit",
  });
  if (install.status !== 0) throw new Error(`installing ${harness} failed`);
}

const tasksDir = resolve(String(values["tasks-dir"]));
const sim = await startSimulatorProcess({
  seed: Number(values.seed),
  harnessTasks: tasksDir,
  harnessSuccessRate: rate,
});
const stack = await startBenchStack({
  kind: "miniflare",
  modelServerUrl: sim.url,
  port: await freePort(),
  stateDir: "harness",
});
try {
  const rows = taskRows(tasksDir, Number(values.tasks), values["task-ids"]?.split(","));
  const stamp = Date.now();
  console.log(
    `bench:harness: ${harnesses.join(", ")} × ${rows.length} tasks × n=${n}; simulator success rate ${rate} (seeded by sample key), ` +
      `${values.runners} concurrent rollouts in one runner; CLIs under .tmp/harness-clis`,
  );
  const batches = new Map<string, string>();
  for (const harness of harnesses)
    batches.set(
      harness,
      await submitBatch(stack.workerUrl, harness, rows, n, `harness-${harness}-${stamp}`),
    );
  const cpuBefore = stack.cpu().worker;
  const run = await runRunner(stack.workerUrl, tasksDir, harnesses, Number(values.runners), 8);
  const workerCpuMs = stack.cpu().worker - cpuBefore;
  let calls = 0;
  let total = 0;
  for (const [harness, batchId] of batches) {
    const read = await readBatch(stack.workerUrl, batchId);
    const pulled = pullGroups(stack.workerUrl, [batchId]);
    total += read.rollouts;
    calls += read.callsRecorded + read.sideCalls;
    const drift = pulled.samples - pulled.members;
    console.log(
      `harness ${harness}: rollouts ${read.rollouts}, reward mean ${read.rewardMean.toFixed(3)}, drift splits ${drift}, ` +
        `calls recorded ${read.callsRecorded} / logged ${read.callsLogged}, rollouts/s ${(read.rollouts / run.wallS).toFixed(3)}`,
    );
    console.log(
      `  ${harness}: terminal ${read.terminal}/${read.rollouts}, terminations ${JSON.stringify(read.terminations)}, ` +
        `side calls ${read.sideCalls}, token-exact continuations ${read.tokenExactCalls}, ` +
        `groups pulled as ${pulled.arrow ? "Arrow" : "JSON"} ${pulled.groups} (${pulled.samples} samples)`,
    );
  }
  console.log(
    `runner: ${total} rollouts in ${run.wallS.toFixed(1)} s (${(total / run.wallS).toFixed(3)} rollouts/s all harnesses), ` +
      `CPU (runner + CLIs) ${(run.cpuS / Math.max(1, total)).toFixed(2)} s per rollout`,
  );
  console.log(
    `worker: ${workerCpuMs.toFixed(0)} ms CPU (workerd) for ${calls} harness calls and their rollouts, ${(workerCpuMs / Math.max(1, calls)).toFixed(2)} ms per call`,
  );
  const turn = turnCpu();
  console.log(
    `turn (in-process, not the Worker): a ${(turn.bytes / 1024).toFixed(0)} KB Claude Code request parsed, translated, matched and spliced in ` +
      `${turn.p50.toFixed(3)} ms (p10 ${turn.p10.toFixed(3)}, p90 ${turn.p90.toFixed(3)}) on this machine's V8`,
  );
} finally {
  await stack.stop();
  await sim.stop();
}
