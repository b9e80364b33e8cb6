/**
 * @module `npm run bench:tree`: what a tree rollout saves. For each of `--roots` prompts, a
 * `--depth`-step dialogue root is forked at `--branch-at` into `--width` children (leaves: the root
 * and its children), against `width + 1` independent rollouts of the same depth per prompt (the
 * GRPO way to get as many finished trajectories). Reported per finished leaf: completion tokens the
 * engine generated and prompt tokens it was sent (prefill), counted from the recorded calls (a
 * child's shared calls were generated once, by its root), and the wall time of each arm, on the
 * local Miniflare stack against one simulator.
 */
import { RolloutClient } from "../../scripts/rollout-client";
import { commandLine } from "../../scripts/command-line";
import type { RolloutView } from "../../src/schemas/rollout-api";
import { type BenchStack, startBenchStack } from "../kit/bench-stack";
import { startSimulatorProcess } from "../kit/simulator-process";

const values = commandLine({
  usage: "npm run bench:tree -- [options]",
  description:
    "Tree rollouts (one root forked into width children) vs independent rollouts of the same depth: tokens per finished leaf.",
  flags: {
    roots: {
      type: "string",
      default: "8",
      help: "prompts (one tree, or width + 1 independent rollouts, each)",
    },
    depth: { type: "string", default: "6", help: "steps (model calls) per trajectory" },
    "branch-at": {
      type: "string",
      default: "4",
      help: "the step the children branch at (they share steps 0..branch-at - 1)",
    },
    width: { type: "string", default: "3", help: "children per root" },
    "max-tokens": { type: "string", default: "32", help: "max_tokens per call" },
    port: { type: "string", default: "23220", help: "Worker port" },
  },
});
const [roots, depth, branchAt, width, maxTokens] = [
  values.roots,
  values.depth,
  values["branch-at"],
  values.width,
  values["max-tokens"],
].map(Number) as [number, number, number, number, number];
if (!(branchAt >= 1 && branchAt < depth && width >= 1 && width <= 64)) {
  console.error("bench:tree: need 1 <= --branch-at < --depth and 1 <= --width <= 64");
  process.exit(2);
}

const config = { max_steps: depth, max_tokens_per_call: maxTokens, temperature: 1 };
const task = (i: number) => ({
  problem: `Tell me about topic ${i}.`,
  extra_args: { turns: depth },
});

/** Tokens the engine generated and was sent for these finished rollouts, counting each recorded call once (shared calls are the root's). */
function engineTokens(views: RolloutView[]): {
  generated: number;
  prefill: number;
  leaves: number;
  failed: number;
} {
  const own = views.flatMap((view) =>
    view.llm_calls.filter((call) => call.forked_from === undefined),
  );
  return {
    generated: own.reduce((n, call) => n + call.completion_token_ids.length, 0),
    prefill: own.reduce((n, call) => n + call.prompt_token_ids.length, 0),
    leaves: views.length,
    failed: views.filter((view) => view.status !== "succeeded").length,
  };
}

async function independentArm(client: RolloutClient, offset: number): Promise<RolloutView[]> {
  const ids = await Promise.all(
    Array.from({ length: roots * (width + 1) }, (_, i) =>
      client.create({
        agent: "dialogue",
        task: task(offset + Math.floor(i / (width + 1))),
        config,
      }),
    ),
  );
  await Promise.all(ids.map((id) => client.waitForEnd(id, 20)));
  return Promise.all(ids.map((id) => client.get(id)));
}

async function treeArm(client: RolloutClient, offset: number): Promise<RolloutView[]> {
  const rootIds = await Promise.all(
    Array.from({ length: roots }, (_, i) =>
      client.create({ agent: "dialogue", task: task(offset + i), config }),
    ),
  );
  // Each root is forked as soon as it ends (a running root may be forked once it committed the step; ending first keeps the arm simple).
  const childIds = (
    await Promise.all(
      rootIds.map(async (id) => {
        await client.waitForEnd(id, 20);
        return (await client.fork(id, { at_step: branchAt, n: width })).children.map(
          (child) => child.rollout_id,
        );
      }),
    )
  ).flat();
  await Promise.all(childIds.map((id) => client.waitForEnd(id, 20)));
  return Promise.all([...rootIds, ...childIds].map((id) => client.get(id)));
}

function line(label: string, run: { views: RolloutView[]; ms: number }): string {
  const t = engineTokens(run.views);
  return `${label.padEnd(28)} leaves ${String(t.leaves).padStart(4)} (failed ${t.failed})  generated/leaf ${(t.generated / t.leaves).toFixed(1).padStart(7)}  prefill/leaf ${(t.prefill / t.leaves).toFixed(1).padStart(8)}  wall ${(run.ms / 1000).toFixed(2)} s`;
}

const simulator = await startSimulatorProcess([
  "--latency-ttft-ms",
  "20",
  "--latency-per-token-ms",
  "1",
  "--seed",
  "3",
]);
let stack: BenchStack | undefined;
try {
  stack = await startBenchStack({
    kind: "miniflare",
    modelServerUrl: simulator.url,
    port: Number(values.port),
    stateDir: "bench-tree",
    localBatchSize: 100,
  });
  const client = new RolloutClient(stack.workerUrl);
  await client.waitForEnd(await client.create({ agent: "dialogue", task: task(999_999), config })); // warm-up
  const timed = async (arm: () => Promise<RolloutView[]>) => {
    const start = performance.now();
    const views = await arm();
    return { views, ms: performance.now() - start };
  };
  const independent = await timed(() => independentArm(client, 0));
  const tree = await timed(() => treeArm(client, 10_000));
  console.log(
    `bench:tree: ${roots} prompts, depth ${depth}, branch at step ${branchAt}, width ${width} (leaves per prompt: ${width + 1}), max_tokens ${maxTokens}`,
  );
  console.log(line("independent (n = width + 1)", independent));
  console.log(line("tree (root + width forks)", tree));
  const [a, b] = [engineTokens(independent.views), engineTokens(tree.views)];
  const expected = (depth + width * (depth - branchAt)) / ((width + 1) * depth);
  console.log(
    `tree / independent, generated tokens per leaf: ${(b.generated / b.leaves / (a.generated / a.leaves)).toFixed(3)} (steps per leaf predict ${expected.toFixed(3)})`,
  );
} finally {
  await stack?.stop();
  await simulator.stop();
}
