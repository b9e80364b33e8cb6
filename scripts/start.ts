/** @module `npm start`: the local stack plus a demo batch of rollouts of the three demo agents. */
import { commandLine, integerFlag } from "./command-line";
import { demoTasks } from "./demo-tasks";
import { type DevStack, RUNNERS, startDevStack, type Runner } from "./dev-stack";
import { RolloutClient } from "./rollout-client";
import { formatSummary, summarize } from "./summary";

const values = commandLine({
  usage: "npm start -- [options]",
  description:
    "Starts the local stack (the vLLM simulator plus the Worker in workerd: Durable Objects, queues and R2 in miniflare),\nruns demo rollouts of the calculator, math and js-coder agents and a few multi-turn reasoning dialogues, prints a summary, then serves until Ctrl-C.\nAgent console output is shown prefixed with [rollout <id>].",
  flags: {
    once: {
      type: "boolean",
      default: false,
      help: "exit after the summary (exit 0 when the demo ran)",
    },
    "per-agent": {
      type: "string",
      default: "8",
      placeholder: "n",
      help: "demo rollouts per agent",
    },
    port: { type: "string", default: "8787", placeholder: "port", help: "Worker port" },
    "simulator-port": {
      type: "string",
      default: "8000",
      placeholder: "port",
      help: "vLLM simulator port (0 = any free port)",
    },
    "state-dir": {
      type: "string",
      placeholder: "dir",
      help: "local state: rollouts, policy, feed, R2 objects (default .tmp/local-stack-<port>, kept across runs)",
    },
    reset: {
      type: "boolean",
      default: false,
      help: "delete the state dir first (policy version 0, empty feed)",
    },
    runner: {
      type: "string",
      default: "miniflare",
      placeholder: "name",
      help: "miniflare (Miniflare's API, reloads on edit) or wrangler (wrangler dev)",
    },
    verbose: { type: "boolean", default: false, help: "print all of the runtime's output" },
  },
  epilogue:
    "The same stack without the demo: npx edge-rollout dev (same --port, --state-dir, --reset).",
});

const port = integerFlag("--port", values.port, 1, 65535, "npm start -- --help");
const simulatorPort = integerFlag(
  "--simulator-port",
  values["simulator-port"],
  0,
  65535,
  "npm start -- --help",
);
const perAgent = integerFlag("--per-agent", values["per-agent"], 1, 1000, "npm start -- --help");
const stateDir = values["state-dir"] ?? `.tmp/local-stack-${port}`;
if (!(RUNNERS as readonly string[]).includes(values.runner)) {
  console.error(
    `--runner must be one of ${RUNNERS.join(", ")}, got ${JSON.stringify(values.runner)} (npm start -- --help)`,
  );
  process.exit(2);
}
// Ctrl-C is ours from the start: during start-up nothing listened (the stack strips the runtime
// libraries' handlers), so a SIGINT to this process killed it and left a workerd running. One
// that comes before the stack is up stops it as soon as it is; a second one exits at once.
let stack: DevStack | undefined;
let stopping = false;
let interrupted = false;
const shutdown = async (code: number) => {
  if (stopping) return;
  stopping = true;
  await stack?.stop();
  process.exit(code);
};
const onSignal = () => {
  if (stack) return void shutdown(0);
  if (interrupted) process.exit(130);
  interrupted = true;
  console.error("stopping as soon as the stack is up … (Ctrl-C again to exit at once)");
};
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);
stack = await startDevStack(values.runner as Runner, {
  workerPort: port,
  stateDir,
  reset: values.reset,
  simulator: { port: simulatorPort, seed: 1 },
  verbose: values.verbose,
  watch: !values.once,
});
if (interrupted) await shutdown(0);

try {
  const tokenizer = stack.simulator ? `, tokenizer ${stack.simulator.tokenizer}` : "";
  console.log(
    `edge-rollout running at ${stack.workerUrl} (vLLM simulator at ${stack.modelServerUrl}${tokenizer}; state in ${stateDir}${values.reset ? ", reset" : ""})`,
  );
  const client = new RolloutClient(stack.workerUrl);
  const tasks = demoTasks(perAgent);
  const started = Date.now();
  const ids = await Promise.all(tasks.map(({ agent, task }) => client.create({ agent, task })));
  const views = await client.waitAll(ids, {
    onProgress: (done) =>
      process.stdout.isTTY && process.stdout.write(`\r${done}/${ids.length} rollouts finished`),
  });
  if (process.stdout.isTTY) process.stdout.write("\n");
  console.log(formatSummary(summarize(views), Date.now() - started));
  if (values.once) await shutdown(0);
  else {
    // Only while serving: after --once the stack is gone and the hint would point at nothing.
    const example = views.find((view) => view.agent === "calculator");
    if (example)
      console.log(
        `\nInspect one: ${stack.workerUrl}/rollouts/${encodeURIComponent(example.rollout_id)} in a browser, curl ${stack.workerUrl}/v1/rollouts/${example.rollout_id}   (or npx edge-rollout show ${example.rollout_id} --url ${stack.workerUrl})`,
      );
    console.log(`\nDashboard: ${stack.workerUrl}/`);
    console.log(`Serving at ${stack.workerUrl} — POST /v1/rollouts to run more. Ctrl-C to stop.`);
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  await shutdown(1);
}
