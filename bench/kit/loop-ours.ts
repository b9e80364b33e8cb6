/** @module One timed round of ours in bench:loop: the rollouts, their wall time, and what they cost the stack. */
import type { RolloutClient } from "../../scripts/rollout-client";
import type { BenchStack } from "./bench-stack";
import { type ObjectRequests, readObjectRequests, requestsBetween } from "./object-requests";
import { sessionUsage, type SessionUsage } from "./object-usage";
import { untilQuiet } from "./process-cpu";
import { RolloutGroup } from "../../src/schemas/rollout-group";
import { publicationReaders, soloGroup } from "../../src/sink/publication/publish-rollout";
import { median } from "./loop-report";
import { type R2Stored, storedPerRollout } from "./r2-bytes";
import type { PublicationLike } from "./workerd-floor";

/** One timed run of ours: wall time, steps, failures, workerd CPU per step. */
export interface OursRun {
  /** The run's sessions' counters, read right after it (outside the timed window), before workerd evicts idle objects. */
  sessions: SessionUsage;
  /** What the policy object and the shards served during the run (read around it, for the same reason). */
  requests: ObjectRequests;
  wallMs: number;
  /** From the start until the last rollout's publication was stored (its sessions' own clocks): when a trainer has every result. */
  publishedMs: number;
  steps: number;
  failed: number;
  cpuPerStep: number;
  /** R2 objects and bytes its publications stored, per rollout (null where the stack cannot tell). */
  r2PerRollout: R2Stored | null;
}

/** Rollouts in a group share this many members (`--data-manager`): a GRPO group's size. */
export const BENCH_GROUP_SIZE = 8;

/**
 * What the floor publishes to match the benches' rollouts: `stored`, measured, and the result
 * message, which the code sends only where a trainer or a batch reads it (rollouts created alone,
 * or in groups of `dataManager`).
 */
export function publishedLike(stored: R2Stored, dataManager = ""): PublicationLike {
  const placement =
    dataManager === ""
      ? soloGroup("bench")
      : RolloutGroup.parse({
          uid: "bench",
          sample_index: 0,
          group_size: 8,
          data_manager: dataManager,
        });
  const readers = publicationReaders(placement);
  return { ...stored, announced: readers.trainer || readers.batch };
}

/** Numbers the benches' groups apart across rounds and runs of one process. */
let groupsMade = 0;
const groupRun = Date.now().toString(36);

/**
 * The `group` field of a round's rollouts by index (`{}` for rollouts created alone): with a data
 * manager, 8 consecutive rollouts share a group, new groups every round.
 */
export function benchGroups(dataManager: string, rollouts: number): (index: number) => object {
  if (dataManager === "") return () => ({});
  const first = groupsMade;
  groupsMade += Math.ceil(rollouts / BENCH_GROUP_SIZE);
  return (index) => ({
    group: {
      uid: `bench-${groupRun}-${first + Math.floor(index / BENCH_GROUP_SIZE)}`,
      sample_index: index % BENCH_GROUP_SIZE,
      group_size: BENCH_GROUP_SIZE,
      data_manager: dataManager,
    },
  });
}

/**
 * What runs of ours stored per rollout, as medians (the floor puts as many objects of as many
 * bytes); 3 objects of no bytes when no run could tell (wrangler's state layout is its own).
 */
export function medianStored(runs: readonly OursRun[]): R2Stored {
  const measured = runs
    .map((run) => run.r2PerRollout)
    .filter((stored): stored is R2Stored => stored !== null);
  if (measured.length === 0) return { objects: 3, bytes: 0 };
  return {
    objects: median(measured.map((s) => s.objects)),
    bytes: Math.round(median(measured.map((s) => s.bytes))),
  };
}

/** A round's shape: how many rollouts, their steps, and each one's task and config. */
export interface OursRoundShape {
  rollouts: number;
  perRollout: number;
  task: (index: number, perRollout: number) => Record<string, unknown>;
  config: (perRollout: number) => Record<string, unknown>;
  /** Empty: every rollout created alone; else each in a group of 8 of this data manager (whole groups: `rollouts` a multiple of 8). */
  dataManager: string;
}

/**
 * Creates the round's rollouts at once, each followed to its end in the same request (the timed wall), then reads
 * what they cost once workerd is quiet: CPU, the objects' requests and rows, R2 bytes, and when
 * the last publication was stored.
 */
export async function timedOursRound(
  stack: BenchStack,
  client: RolloutClient,
  shape: OursRoundShape,
): Promise<OursRun> {
  const { rollouts, perRollout } = shape;
  const requestsBefore = await readObjectRequests(stack.workerUrl);
  const r2Before = stack.r2Stored();
  const cpuBefore = stack.cpu();
  const start = performance.now();
  const startEpoch = Date.now();
  const groupOf = benchGroups(shape.dataManager, rollouts);
  // Each rollout created and followed in one request (`stream: true`), as a client following its rollouts would.
  const runs = await Promise.all(
    Array.from({ length: rollouts }, (_, i) =>
      client.run({
        agent: "dialogue",
        task: shape.task(i, perRollout),
        config: shape.config(perRollout),
        ...groupOf(i),
      }),
    ),
  );
  const ids = runs.map((run) => run.rolloutId);
  const ends = runs.map((run) => run.end);
  const wallMs = performance.now() - start;
  const done = ends.reduce((n, end) => n + end.steps, 0);
  // The CPU the rollouts caused, including publications still running after their end events.
  await untilQuiet(() => stack.cpu().worker);
  const cpuPerStep = (stack.cpu().worker - cpuBefore.worker) / done;
  const r2After = stack.r2Stored();
  const requests = requestsBetween(requestsBefore, await readObjectRequests(stack.workerUrl));
  const sessions = await sessionUsage(client, ids);
  // Read after the CPU (reading every view costs some): the publication times the sessions stored.
  const published = (await Promise.all(ids.map((id) => client.get(id)))).map(
    (view) => view.publication.published_at ?? Number.NaN,
  );
  const publishedMs = Math.max(...published) - startEpoch;
  return {
    sessions,
    requests,
    wallMs,
    publishedMs,
    steps: done,
    failed: ends.filter((end) => end.status !== "succeeded").length,
    cpuPerStep,
    r2PerRollout:
      r2Before === null || r2After === null
        ? null
        : storedPerRollout(r2Before, r2After, ids.length),
  };
}
