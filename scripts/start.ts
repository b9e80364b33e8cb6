/** @module `npm start`: the local stack plus a demo batch of rollouts of both demo agents. */
import { parseArgs } from "node:util";
import { demoTasks } from "./demo-tasks";
import { startLocalStack } from "./local-stack";
import { RolloutClient } from "./rollout-client";
import { formatSummary, summarize } from "./summary";

const { values } = parseArgs({
  options: {
    once: { type: "boolean", default: false },
    "per-agent": { type: "string", default: "8" },
    port: { type: "string", default: "8787" },
    "simulator-port": { type: "string", default: "8000" },
    verbose: { type: "boolean", default: false },
  },
});

const perAgent = Number(values["per-agent"]);
const stack = await startLocalStack({ workerPort: Number(values.port), stateDir: `.tmp/local-stack-${values.port}`, simulator: { port: Number(values["simulator-port"]), seed: 1 }, verbose: values.verbose });
let stopping = false;
const shutdown = async (code: number) => {
  if (stopping) return;
  stopping = true;
  await stack.stop();
  process.exit(code);
};
process.on("SIGINT", () => void shutdown(0));
process.on("SIGTERM", () => void shutdown(0));

try {
  console.log(`edge-rollout running at ${stack.workerUrl} (vLLM simulator at ${stack.modelServerUrl})`);
  const client = new RolloutClient(stack.workerUrl);
  const tasks = demoTasks(perAgent);
  const started = Date.now();
  const ids = await Promise.all(tasks.map(({ agent, task }) => client.create({ agent, task })));
  const views = await client.waitAll(ids, {
    onProgress: (done) => process.stdout.isTTY && process.stdout.write(`\r${done}/${ids.length} rollouts finished`),
  });
  if (process.stdout.isTTY) process.stdout.write("\n");
  console.log(formatSummary(summarize(views), Date.now() - started));
  const example = views.find((view) => view.agent === "calculator");
  if (example) console.log(`\nInspect one: curl ${stack.workerUrl}/v1/rollouts/${example.rollout_id}`);
  if (values.once) await shutdown(0);
  else console.log(`\nServing at ${stack.workerUrl} — POST /v1/rollouts to run more. Ctrl-C to stop.`);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  await shutdown(1);
}
