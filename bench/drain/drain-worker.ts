/**
 * @module `npm run bench:drain -- --from-worker`: the drain end to end from a real local stack.
 * Every round (the first an untimed warm-up, on at most 8 groups a batch) publishes two fresh
 * batches of `--groups` × `--n` external rollouts, one long model call each, through the real sink (session → R2 + queue →
 * results consumer → feed, packed per group), waits until workerd is quiet, then has the Python
 * client drain them (`drain_worker_bench.py`): one batch as Arrow, the other as JSON, each
 * pull → padded arrays, every group leased for the first time and acked after the drain's clock
 * stops, against the bare-Worker floor serving the same bytes. Loopback only, bounded.
 */
import { benchStateDir, startBenchStack } from "../kit/bench-stack";
import {
  type Counts,
  NO_COUNTS,
  type PathCounts,
  perRollout,
  phaseCounts,
  plus,
  resultPathCounts,
} from "./drain-counts";
import { startDrainFloor } from "./drain-floor";
import { publishDrainGroups, sizedProblem, untilGroupsReady } from "./drain-publish";
import { startPythonDrainer } from "./drain-python";
import { untilQuiet } from "../kit/process-cpu";
import { startSimulatorProcess } from "../kit/simulator-process";

/** The flags `bench:drain` passes on. */
export interface DrainWorkerOptions {
  /** Groups each drain leases (each drain its own batch of them). */
  groups: number;
  n: number;
  promptTokens: number;
  responseTokens: number;
  promptLength: number;
  responseLength: number;
  /** Timed rounds, after one untimed warm-up round; each drains one batch per format. */
  rounds: number;
  /** Groups per batch of the warm-up round (it warms code paths: fewer groups do, and publish sooner). */
  warmUpGroups: number;
  python: string;
  port: number;
  /** Whether feed shards compact small packs (the feed config's default threshold) or never. */
  compaction: boolean;
  vars: Record<string, string>;
}

/** Runs the whole bench; resolves with the exit code. */
export async function runDrainFromWorker(options: DrainWorkerOptions): Promise<number> {
  const simulator = await startSimulatorProcess(["--seed", "3"]);
  const stack = await startBenchStack({
    kind: "miniflare",
    modelServerUrl: simulator.url,
    port: options.port,
    stateDir: "bench-drain",
    vars: options.vars,
  });
  const floor = await startDrainFloor(benchStateDir("drain-floor"));
  // A runtime that dies mid-run is named with its last output, not left to surface as a refused connection.
  void stack.ended.then((reason) => console.error(`bench:drain: the stack ended: ${reason}`));
  const python = startPythonDrainer(options.python, [
    "--url",
    stack.workerUrl,
    "--floor-url",
    floor.url,
    "--groups",
    String(options.groups),
    "--n",
    String(options.n),
    "--warm-up-groups",
    String(options.warmUpGroups),
    "--groups-per-pull",
    "256",
    "--prompt-length",
    String(options.promptLength),
    "--response-length",
    String(options.responseLength),
    "--rounds",
    String(options.rounds),
    "--arrow-lease-ms",
    "20000",
    "--json-lease-ms",
    "60000",
  ]);
  try {
    if (!options.compaction) {
      const response = await fetch(`${stack.workerUrl}/v1/feed/config`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ pack_compaction_min_bytes: 0 }),
      });
      if (!response.ok)
        throw new Error(
          `turning compaction off answered ${response.status}: ${await response.text()}`,
        );
    }
    const problem = await sizedProblem(simulator.url, options.promptTokens);
    const run = `drain-${Date.now()}`;
    let published = { wallMs: 0, settleMs: 0, cpuMs: 0, rollouts: 0, quietMs: 0 };
    let publishing = { feed: [] as Counts[], tracker: NO_COUNTS, policy: NO_COUNTS };
    let draining: Counts[] = [];
    // Counters are in memory: an object evicted between two readings restarts at 0, and that phase is undercounted.
    const restarted = { publishing: new Set<string>(), draining: new Set<string>() };
    const add = (sum: Counts[], more: Counts[]) => more.map((c, i) => plus(sum[i] ?? NO_COUNTS, c));
    for (let round = 0; round <= options.rounds; round++) {
      const batches = { arrow: `${run}-r${round}-arrow`, json: `${run}-r${round}-json` };
      const groups = round === 0 ? options.warmUpGroups : options.groups;
      const before: PathCounts = await resultPathCounts(stack.workerUrl, []);
      const cpu0 = stack.cpu().worker;
      const phase = await publishDrainGroups(stack.workerUrl, problem, {
        batchIds: [batches.arrow, batches.json],
        groups,
        n: options.n,
        promptTokens: options.promptTokens,
        responseTokens: options.responseTokens,
        concurrency: 32,
      });
      const settleStarted = performance.now();
      for (const id of [batches.arrow, batches.json])
        await untilGroupsReady(stack.workerUrl, id, groups);
      const settleMs = performance.now() - settleStarted;
      const cpuMs = stack.cpu().worker - cpu0;
      const counted = phaseCounts(
        before,
        await resultPathCounts(stack.workerUrl, [batches.arrow, batches.json]),
      );
      for (const name of counted.restarted) restarted.publishing.add(name);
      publishing = {
        feed: add(publishing.feed, counted.feed),
        tracker: plus(publishing.tracker, counted.tracker),
        policy: plus(publishing.policy, counted.policy),
      };
      // What publication set going runs on in the same workerd (pack compaction of a batch's tail,
      // a session's own delivery check 15 s on when the consumer could not confirm its result):
      // drain only once it is quiet, or that would be timed as the pull's cost.
      const quietStarted = performance.now();
      await untilQuiet(() => stack.cpu().worker, 2_000, 150, 240_000);
      published = {
        wallMs: published.wallMs + phase.wallMs,
        settleMs: published.settleMs + settleMs,
        cpuMs: published.cpuMs + cpuMs,
        rollouts: published.rollouts + phase.rollouts,
        quietMs: published.quietMs + performance.now() - quietStarted,
      };
      const drainBefore = await resultPathCounts(stack.workerUrl, []);
      await python.drain(round, batches);
      const drained = phaseCounts(drainBefore, await resultPathCounts(stack.workerUrl, []));
      for (const name of drained.restarted)
        if (name.startsWith("feed")) restarted.draining.add(name);
      draining = add(draining, drained.feed);
    }
    const flags = [
      options.vars.FEED_GROUP_PACKS === "off" ? "group packs off" : "",
      options.compaction ? "" : "compaction off",
      options.vars.FEED_STREAMED_PULLS === "off" ? "streamed pulls off" : "",
    ].filter(Boolean);
    console.log(
      `bench:drain --from-worker — ${options.rounds} rounds after an untimed one, each 2 batches (one Arrow drain, one JSON) of ${options.groups} groups (the untimed round ${options.warmUpGroups}) × ${options.n} samples of ~${options.promptTokens} + ${options.responseTokens} tokens, ` +
        `${published.rollouts} rollouts published through the real sink, a round's before its drains, in ${(published.wallMs / 1000).toFixed(1)} s (+${(published.settleMs / 1000).toFixed(1)} s until every group was ready, ${(published.quietMs / 1000).toFixed(0)} s for workerd to be quiet); ` +
        `workerd CPU for publication, ingestion, packing and compaction: ${(published.cpuMs / published.rollouts).toFixed(2)} ms/rollout${flags.length ? ` (${flags.join(", ")})` : ""}`,
    );
    const rollouts = published.rollouts;
    console.log(
      `result path, requests per rollout while ${rollouts} rollouts were published (the objects' own counters; ${publishing.feed.length} feed shard${publishing.feed.length > 1 ? "s" : ""})` +
        (restarted.publishing.size > 0
          ? ` (evicted during a publication, so counted since it restarted: ${[...restarted.publishing].join(", ")}):`
          : ":"),
    );
    const busiest = Math.max(...publishing.feed.map((c) => c.total));
    console.log(
      `  ${perRollout("feed shards, all", publishing.feed.reduce(plus, NO_COUNTS), rollouts)}; busiest shard ${(busiest / rollouts).toFixed(3)}`,
    );
    console.log(`  ${perRollout("batch trackers", publishing.tracker, rollouts)}`);
    // Deployment-wide: it must see nothing per rollout (runners' claims read the policy from admission shards).
    console.log(`  ${perRollout("policy object", publishing.policy, rollouts)}`);
    const pulls = draining.reduce((n, c) => n + (c.by_method.pull ?? 0), 0);
    console.log(
      restarted.draining.size > 0
        ? `the drains' requests: not counted (${[...restarted.draining].join(", ")} evicted during a drain, so its in-memory counters restarted)`
        : `the drains' requests at the feed shards (${pulls} pulls over ${2 * (options.rounds + 1)} drains, their acks): ${draining.map((c) => JSON.stringify(c.by_method)).join(" + ")}`,
    );
    return await python.finish();
  } finally {
    python.stop();
    await floor.stop();
    await stack.stop();
    await simulator.stop();
  }
}
