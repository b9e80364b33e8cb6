/**
 * @module `npm run bench:loop`: N rollouts × 5 steps through edge-rollout on the local stack vs a
 * bare Node loop with the `openai` client and the workerd floor, all against one simulator at a
 * fixed latency, in `--rounds` alternating rounds (medians reported: one run of the same code
 * varies by ±20% on this machine), then a profiled run that splits the Worker's CPU per step into phases.
 */
import { RolloutClient } from "../../scripts/rollout-client";
import { runBareLoop } from "../kit/bare-loop";
import {
  benchStateDir,
  type BenchStack,
  type StackKind,
  startBenchStack,
} from "../kit/bench-stack";
import {
  addRequests,
  byMethodLine,
  formatObjectRequests,
  NO_REQUESTS,
} from "../kit/object-requests";
import {
  addSessionUsage,
  formatUsage,
  NO_SESSIONS,
  sharedObjectUsage,
  type SessionUsage,
} from "../kit/object-usage";
import { floorReport, type FloorRound, median, priceReport, row, spread } from "../kit/loop-report";
import { startSimulatorProcess } from "../kit/simulator-process";
import { profileSteps } from "../kit/step-profile";
import { type R2Stored, storedPerRollout } from "../kit/r2-bytes";
import { type PublicationLike, startWorkerdFloor, type WorkerdFloor } from "../kit/workerd-floor";
import { formatCpuFit } from "./cpu-fit";
import {
  BENCH_GROUP_SIZE,
  benchGroups,
  medianStored,
  type OursRun,
  publishedLike,
  timedOursRound,
} from "../kit/loop-ours";
import { fitPoints } from "./loop-fit";
import { loopOptions } from "./loop-options";

const {
  values,
  rollouts,
  steps,
  maxTokens,
  profileRollouts,
  rounds,
  warmUpRounds,
  kinds,
  fitSteps,
  dataManager,
} = loopOptions();
/** Work messages per local consumer batch: the consumer only hands rollouts to their sessions, so any size is fast. */
const LOCAL_BATCH = 100;
/** Durable Object round trips per step in the floor's "objects" run: admission, release, step commit. */
const FLOOR_RPCS = 3;
/** The headline's goal (issue 26 item 6): framework CPU above the floor with publication, ms per step. */
const HEADLINE_GOAL_MS = 1.0;
/** A production step's latency, mostly the model's (docs/scale.md's assumption): how long a session is awake per step. */
const SESSION_AWAKE_S_PER_STEP = 2;

const simulator = await startSimulatorProcess([
  "--latency-ttft-ms",
  values["ttft-ms"],
  "--latency-per-token-ms",
  values["per-token-ms"],
  "--seed",
  "3",
]);
const configFor = (perRollout: number) => ({
  max_steps: perRollout,
  max_tokens_per_call: maxTokens,
});
const config = configFor(steps);
const shape = { rollouts, steps, maxTokens, concurrency: rollouts };
const task = (i: number, perRollout = steps) => ({
  problem: `Tell me about topic ${i}.`,
  extra_args: { turns: perRollout },
});

/** One timed round of ours on `stack`: every rollout created at once, followed to its end. */
const timedOurs = (stack: BenchStack, client: RolloutClient, perRollout = steps) =>
  timedOursRound(stack, client, { rollouts, perRollout, task, config: configFor, dataManager });

async function timedBare(): Promise<{ wallMs: number; calls: number; cpuPerCall: number }> {
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const calls = await runBareLoop(simulator.url, "sim-qwen3", shape);
  const wallMs = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  return { wallMs, calls, cpuPerCall: (cpu.user + cpu.system) / 1000 / calls };
}

/** One round of the floor: fetch only, with object round trips, and with a publication like ours' (`like`, per rollout). */
async function floorRound(floor: WorkerdFloor, like: PublicationLike): Promise<FloorRound> {
  return {
    fetchOnly: await floor.loop("sim-qwen3", shape, 0),
    withObjects: await floor.loop("sim-qwen3", shape, FLOOR_RPCS),
    withPublication: await floor.loop("sim-qwen3", shape, FLOOR_RPCS, true, like),
  };
}

const stacks: Array<{ stack: BenchStack; client: RolloutClient }> = [];
const floor = values["skip-floor"]
  ? null
  : await startWorkerdFloor(simulator.url, benchStateDir("floor-loop"));
try {
  for (const [i, kind] of kinds.entries()) {
    const stack = await startBenchStack({
      kind,
      modelServerUrl: simulator.url,
      port: Number(values.port) + i,
      stateDir: `bench-loop-${kind}`,
      localBatchSize: LOCAL_BATCH,
      ...(values["interruptible-calls"] === "on"
        ? { vars: { DRIVER_INTERRUPTIBLE_CALLS: "on" } }
        : {}),
    });
    const client = new RolloutClient(stack.workerUrl);
    stacks.push({ stack, client });
    // Warm-up: first requests compile code paths in workerd, open connections, wake the shards.
    await Promise.all(
      [0, 1, 2, 3].map((w) => client.run({ agent: "dialogue", task: task(100_000 + w), config })),
    );
  }
  if (floor) await floor.loop("sim-qwen3", { ...shape, rollouts: 4 }, FLOOR_RPCS, true); // warm-up: compile, open connections, create the objects' tables

  const ours = new Map<StackKind, OursRun[]>(kinds.map((kind) => [kind, []]));
  const failures = new Map<StackKind, string>();
  const bare: Array<Awaited<ReturnType<typeof timedBare>>> = [];
  const floorRuns: FloorRound[] = [];
  /** What the floor's publications stored per rollout, per round. */
  const floorStored: R2Stored[] = [];
  /** What ours stored per rollout (medians so far; the floor puts as many objects, padded to as many bytes). */
  const oursStored = () => medianStored([...ours.values()].flat());
  // Full-size rounds first, not counted: until the isolate's JIT has compiled the hot paths a round
  // costs more (ours' first round measured 3.1–4.1 ms/step, the next ones 2.1–2.9), a one-off a
  // long training run does not see per step. The floor and the bare loop get the same.
  for (let round = 0; round < warmUpRounds; round += 1) {
    const warmUps: OursRun[] = [];
    for (const { stack, client } of stacks) warmUps.push(await timedOurs(stack, client));
    await timedBare();
    if (floor) await floorRound(floor, publishedLike(medianStored(warmUps), dataManager));
  }
  for (let round = 0; round < rounds; round += 1) {
    for (const { stack, client } of stacks) {
      if (failures.has(stack.kind)) continue;
      try {
        ours.get(stack.kind)!.push(await timedOurs(stack, client));
      } catch (error) {
        // Side by side, one runner failing (wrangler dev's "Your worker restarted mid-request") is a result, not the end of the run.
        if (kinds.length === 1) throw error;
        failures.set(
          stack.kind,
          error instanceof Error ? error.message.split("\n")[0]! : String(error),
        );
      }
    }
    bare.push(await timedBare());
    if (floor) {
      const before = floor.r2Stored();
      floorRuns.push(await floorRound(floor, publishedLike(oursStored(), dataManager)));
      const after = floor.r2Stored();
      if (before && after) floorStored.push(storedPerRollout(before, after, rollouts));
    }
  }

  /** What ours published per rollout over all its rounds (the floor matched it round by round). */
  const oursPublished = publishedLike(oursStored(), dataManager);
  const bareMs = median(bare.map((b) => b.wallMs));
  const floorObjectsCpu = median(floorRuns.map((f) => f.withObjects.cpuMsPerCall));
  const floorPublishedCpu = median(floorRuns.map((f) => f.withPublication.cpuMsPerCall));
  // Miniflare's local R2 and queue simulators run in the same workerd; without the floor there is no measure of them.
  const simulatorsCpu = floorRuns.length > 0 ? floorPublishedCpu - floorObjectsCpu : 0;
  console.log(
    `bench:loop — ${rollouts} rollouts × ${steps} steps (${dataManager === "" ? "each created alone" : `in groups of ${BENCH_GROUP_SIZE}, data manager ${dataManager}`}), simulator ttft ${values["ttft-ms"]} ms + ${values["per-token-ms"]} ms/token, max_tokens ${maxTokens}` +
      (rounds > 1 ? `; ${rounds} alternating rounds (ours, bare, floor), medians` : "") +
      (warmUpRounds > 0
        ? `, after ${warmUpRounds} untimed warm-up round${warmUpRounds > 1 ? "s" : ""}`
        : ""),
  );
  // The headline (issue 26 item 6): what this machine can show of the framework's own CPU, with the floor beside it.
  for (const kind of kinds) {
    const runs = ours.get(kind)!;
    if (runs.length === 0 || floorRuns.length === 0) continue;
    const oursCpu = median(runs.map((r) => r.cpuPerStep));
    console.log(
      `framework CPU above the workerd floor (with publication): ${(oursCpu - floorPublishedCpu).toFixed(2)} ms/step (${kind}: ours ${oursCpu.toFixed(2)} ms/step, the floor with publication ${floorPublishedCpu.toFixed(2)} ms/step; goal ≤ ${HEADLINE_GOAL_MS.toFixed(1)})`,
    );
  }
  const usages = new Map<
    StackKind,
    { sessions: SessionUsage; shared: ReturnType<typeof sharedObjectUsage>; steps: number }
  >();
  for (const { stack, client } of stacks) {
    const runs = ours.get(stack.kind)!;
    const label = `edge-rollout on ${stack.kind === "miniflare" ? "Miniflare's API" : "wrangler dev"}`;
    if (runs.length === 0) {
      console.log(`${label}: run failed: ${failures.get(stack.kind)}`);
      continue;
    }
    const failed = runs.reduce((n, r) => n + r.failed, 0);
    const cpu = median(runs.map((r) => r.cpuPerStep));
    console.log(
      row(label, median(runs.map((r) => r.wallMs)), runs[0]!.steps) +
        (failed ? `  (${failed} not succeeded)` : "") +
        spread(
          runs.map((r) => r.wallMs / 1000),
          3,
        ),
    );
    console.log(
      `  until every rollout is published (its R2 objects and, where read, its result message; the timed wall ends at the last end event): ${(median(runs.map((r) => r.publishedMs)) / 1000).toFixed(3)} s` +
        spread(
          runs.map((r) => r.publishedMs / 1000),
          3,
        ),
    );
    console.log(
      `  framework CPU per step (${stack.kind}): ${cpu.toFixed(2)} ms in the Worker's workerd (driver, sessions, shards; goal ≤ 2 ms)` +
        spread(
          runs.map((r) => r.cpuPerStep),
          2,
        ),
    );
    const served = runs.map((r) => r.requests).reduce(addRequests, NO_REQUESTS);
    const stepsDone = runs.reduce((n, r) => n + r.steps, 0);
    for (const line of formatObjectRequests(NO_REQUESTS, served, stepsDone))
      console.log(`  ${line}`);
    console.log(`  ${byMethodLine(NO_REQUESTS, served)}`);
    const sessions = runs.map((r) => r.sessions).reduce(addSessionUsage, NO_SESSIONS);
    const shared = sharedObjectUsage(served);
    for (const line of formatUsage(sessions, shared, stepsDone, steps)) console.log(`  ${line}`);
    usages.set(stack.kind, { sessions, shared, steps: stepsDone });
    if (profileRollouts > 0 && stack.kind === "miniflare")
      for (const line of await profileSteps(stack, client, {
        rollouts: profileRollouts,
        steps,
        maxTokens,
        firstTopic: 200_000,
        groupOf: benchGroups(dataManager, profileRollouts),
      }))
        console.log(line);
  }
  console.log(
    row(`bare openai loop, ${rollouts} concurrent`, bareMs, bare[0]!.calls) +
      spread(
        bare.map((b) => b.wallMs / 1000),
        3,
      ),
  );
  for (const kind of kinds) {
    const runs = ours.get(kind)!;
    if (runs.length === 0) continue;
    // Each round's own ratio (ours and bare ran back to back), then their median.
    const ratios = runs.map((r, i) => r.wallMs / bare[i]!.wallMs);
    console.log(
      `ratio ours (${kind}) / bare (${rollouts} concurrent): ${median(ratios).toFixed(2)}x  (issue 11 goal: ≤ 1.5x at 256 rollouts / ttft 100 ms, ≤ 1.3x at 30 / ttft 50 ms)` +
        spread(ratios, 2),
    );
  }
  console.log(
    `baseline CPU per step:  ${median(bare.map((b) => b.cpuPerCall)).toFixed(2)} ms (openai client in this process)`,
  );
  if (floor)
    for (const line of floorReport({
      rounds: floorRuns,
      rpcs: FLOOR_RPCS,
      oursPublished,
      floorStored,
      ours: kinds.flatMap((kind) => {
        const runs = ours.get(kind)!;
        return runs.length === 0
          ? []
          : [
              {
                kind,
                cpuPerStep: median(runs.map((r) => r.cpuPerStep)),
                wallMs: median(runs.map((r) => r.wallMs)),
              },
            ];
      }),
    }))
      console.log(line);
  for (const kind of kinds) {
    const usage = usages.get(kind);
    const runs = ours.get(kind)!;
    if (!usage || runs.length === 0) continue;
    const oursCpu = median(runs.map((r) => r.cpuPerStep));
    const lines = priceReport({
      kind,
      sessions: usage.sessions,
      shared: usage.shared,
      stepsDone: usage.steps,
      stepsPerRollout: steps,
      workerCpuMs: Math.max(0, oursCpu - simulatorsCpu),
      sessionAwakeS: SESSION_AWAKE_S_PER_STEP,
      published: oursPublished,
    });
    for (const line of lines) console.log(line);
  }
  console.log(
    "note: each rollout is driven in its own invocation (its session's alarm, set by the create, calls the drive route " +
      "through the DRIVER service binding), so production's 6 outgoing connections per invocation apply per rollout, and locally every rollout advances at once.",
  );
  // Where the gap to the floor is: once per rollout, or in every step (see cpu-fit.ts).
  const fitted = stacks[0];
  if (fitSteps.length > 0 && floor && fitted && !failures.has(fitted.stack.kind)) {
    const points = await fitPoints(fitSteps, rounds, {
      ours: (count) => timedOurs(fitted.stack, fitted.client, count),
      like: (run) => (run.r2PerRollout ? publishedLike(run.r2PerRollout, dataManager) : undefined),
      floor: async (count, like) =>
        (await floor.loop("sim-qwen3", { ...shape, steps: count }, FLOOR_RPCS, true, like))
          .cpuMsPerCall,
    });
    console.log(
      `CPU per rollout and per step (${fitted.stack.kind}; ${rollouts} rollouts at ${fitSteps.join(", ")} steps each, medians of ${rounds} alternating round(s) per count):`,
    );
    for (const line of formatCpuFit(points.ours, points.floor, HEADLINE_GOAL_MS)) console.log(line);
  }
} finally {
  for (const { stack } of stacks) await stack.stop();
  await floor?.stop();
  await simulator.stop();
}
