/**
 * @module `npm run bench:instructions`: bench:loop's headline in instructions instead of CPU
 * seconds. Ours (the Miniflare stack) and the floor (a bare Worker making the same calls, 3 object
 * RPCs per step to a new object per rollout, a publication per rollout of as many bytes as
 * ours) each run their workerd
 * under valgrind's callgrind, and the instructions each executes for the same rollouts are counted
 * between a zeroing and a dump of its counters. CPU seconds on this shared VM move by ±0.5 ms/step
 * between runs of the same code, more than most changes save; instruction counts repeat within
 * ±5% a round, so two versions of the code that differ by more than ~0.3 M per step can be told
 * apart (use 5 rounds). Callgrind runs workerd ~50× slower: keep runs small.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RolloutClient } from "../../scripts/rollout-client";
import { commandLine } from "../../scripts/command-line";
import { startBenchStack } from "../kit/bench-stack";
import { requireValgrind, startCallgrind } from "../kit/callgrind";
import { percentile } from "../kit/latency-table";
import { startSimulatorProcess } from "../kit/simulator-process";
import { publishedLike } from "../kit/loop-ours";
import { storedPerRollout } from "../kit/r2-bytes";
import { startWorkerdFloor } from "../kit/workerd-floor";

const values = commandLine({
  usage: "npm run bench:instructions -- [options]",
  description:
    "Instructions per step of ours and of the workerd floor with publication, counted by callgrind.",
  flags: {
    rollouts: { type: "string", default: "16", help: "rollouts per round" },
    steps: { type: "string", default: "5", help: "steps (model calls) per rollout" },
    rounds: { type: "string", default: "3", help: "rounds of ours and the floor; medians" },
    port: { type: "string", default: "8861", help: "Worker port" },
    "settle-ms": {
      type: "string",
      default: "6000",
      help: "how long a round waits after its last end event for the publications (counted; checked after)",
    },
  },
});
const rollouts = Number(values.rollouts);
const steps = Number(values.steps);
const rounds = Number(values.rounds);
const settleMs = Number(values["settle-ms"]);
const MAX_TOKENS = 24;
/** The floor's object round trips per step, as bench:loop's. */
const FLOOR_RPCS = 3;

requireValgrind("bench:instructions");
const callgrind = startCallgrind();
const median = (xs: number[]) => percentile(xs, 50);
const simulator = await startSimulatorProcess([
  "--latency-ttft-ms",
  "50",
  "--latency-per-token-ms",
  "1",
  "--seed",
  "3",
]);
const stack = await startBenchStack({
  kind: "miniflare",
  modelServerUrl: simulator.url,
  port: Number(values.port),
  stateDir: "bench-instructions",
  localBatchSize: 100,
});
const oursPid = callgrind.newProcess();
const floorRoot = mkdtempSync(join(tmpdir(), "edge-rollout-floor-"));
const floor = await startWorkerdFloor(simulator.url, floorRoot);
const floorPid = callgrind.newProcess();
const client = new RolloutClient(stack.workerUrl);
const config = { max_steps: steps, max_tokens_per_call: MAX_TOKENS };
const shape = { rollouts, steps, maxTokens: MAX_TOKENS, concurrency: rollouts };
let topic = 0;

/**
 * `rollouts` rollouts through ours, then `settleMs` for their publications. The round does not
 * poll for them: reading a rollout's view is work of its own (every step and call, as JSON),
 * which counted here made ours look twice as heavy; `checkPublished` looks after the dump.
 */
async function oursRound(): Promise<string[]> {
  // Each created and followed in one request, as a client following its rollouts would.
  const runs = await Promise.all(
    Array.from({ length: rollouts }, () =>
      client.run({
        agent: "dialogue",
        task: { problem: `Tell me about topic ${topic++}.`, extra_args: { turns: steps } },
        config,
      }),
    ),
  );
  const ids = runs.map((run) => run.rolloutId);
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  return ids;
}

/** Throws unless every rollout was published within its round (else its count would be short). */
async function checkPublished(ids: string[]): Promise<void> {
  const late = [];
  for (const id of ids) if ((await client.get(id)).publication.published_at === null) late.push(id);
  if (late.length > 0)
    throw new Error(
      `${late.length} of ${ids.length} rollouts not published within the round: raise --settle-ms`,
    );
}

try {
  await checkPublished(await oursRound()); // warm-up: compiles the paths, opens connections, wakes the shards
  await floor.loop("sim-qwen3", shape, FLOOR_RPCS, true);
  const ours: number[] = [];
  const bare: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const storedBefore = stack.r2Stored();
    const counted = await callgrind.count(oursPid, oursRound);
    await checkPublished(counted.result);
    ours.push(counted.instructions / (rollouts * steps));
    // The floor makes as many puts as ours did, of as many bytes: the local R2 simulator costs by the put and the byte.
    const storedAfter = stack.r2Stored();
    const like =
      storedBefore && storedAfter
        ? publishedLike(storedPerRollout(storedBefore, storedAfter, rollouts))
        : undefined;
    const floorRun = await callgrind.count(floorPid, () =>
      floor.loop("sim-qwen3", shape, FLOOR_RPCS, true, like),
    );
    bare.push(floorRun.instructions / (rollouts * steps));
  }
  const m = (x: number) => `${(x / 1e6).toFixed(2)} M`;
  console.log(
    `bench:instructions — ${rollouts} rollouts × ${steps} steps, ${rounds} rounds, workerd under callgrind (instructions, all threads)`,
  );
  console.log(`  ours: ${ours.map(m).join(", ")} per step`);
  console.log(`  the floor with publication: ${bare.map(m).join(", ")} per step`);
  console.log(
    `instructions above the floor (with publication): ${m(median(ours) - median(bare))} per step (ours ${m(median(ours))}, the floor ${m(median(bare))}; ours / floor ${(median(ours) / median(bare)).toFixed(2)}x)`,
  );
} finally {
  await stack.stop();
  await floor.stop();
  await simulator.stop();
  callgrind.stop();
  rmSync(floorRoot, { recursive: true, force: true });
}
