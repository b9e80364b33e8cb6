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
import { startBenchStack } from "../bench-stack";
import { freePort } from "../../tools/simulator/free-port";
import { startSimulatorProcess } from "../simulator-process";
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

const sim = await startSimulatorProcess({
  seed: Number(values.seed),
  harnessTasks: TASKS,
  harnessSuccessRate: rate,
});
const stack = await startBenchStack({
  kind: "miniflare",
  modelServerUrl: sim.url,
  port: await freePort(),
  stateDir: "harness",
});
try {
  const rows = taskRows(Number(values.tasks));
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
  const run = await runRunner(stack.workerUrl, harnesses, Number(values.runners), 8);
  let total = 0;
  for (const [harness, batchId] of batches) {
    const read = await readBatch(stack.workerUrl, batchId);
    const pulled = pullGroups(stack.workerUrl, [batchId]);
    total += read.rollouts;
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
} finally {
  await stack.stop();
  await sim.stop();
}
