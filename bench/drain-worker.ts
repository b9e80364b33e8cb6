/**
 * @module `npm run bench:drain -- --from-worker`: the drain end to end from a real local stack.
 * Publishes `--groups` × `--n` external rollouts of one long model call each through the real
 * sink (session → R2 + queue → results consumer → feed, packed per group), then has the Python
 * client drain the batch (`bench/drain_worker_bench.py`): pull → padded arrays, Arrow and JSON,
 * against the bare-Worker floor serving the same bytes. Loopback only, bounded.
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { benchStateDir, startBenchStack } from "./bench-stack";
import { startDrainFloor } from "./drain-floor";
import { publishDrainGroups, sizedProblem, untilGroupsReady } from "./drain-publish";
import { untilQuiet } from "./process-cpu";
import { startSimulatorProcess } from "./simulator-process";

/** The flags `bench:drain` passes on. */
export interface DrainWorkerOptions {
  groups: number;
  n: number;
  promptTokens: number;
  responseTokens: number;
  promptLength: number;
  responseLength: number;
  rounds: number;
  python: string;
  port: number;
  /** Whether feed shards compact small packs (the feed config's default threshold) or never. */
  compaction: boolean;
  vars: Record<string, string>;
}

async function runPython(python: string, args: string[]): Promise<number> {
  const child = spawn(python, ["bench/drain_worker_bench.py", ...args], {
    cwd: resolve(import.meta.dirname, ".."),
    stdio: "inherit",
  });
  // Bounded: a stuck child is killed rather than left running.
  const guard = setTimeout(() => child.kill("SIGKILL"), 900_000);
  const code = await new Promise<number>((done) => {
    child.once("error", (error) => {
      console.error(
        `bench:drain needs ${python} with numpy and pyarrow (clients/python): ${error.message}`,
      );
      done(1);
    });
    child.once("exit", (exitCode) => done(exitCode ?? 1));
  });
  clearTimeout(guard);
  return code;
}

interface Counts {
  total: number;
  by_method: Record<string, number>;
}

/** The result path's objects' own request counters: feed shards, the batch's tracker, the policy object. */
async function resultPathCounts(
  workerUrl: string,
  batchId: string,
): Promise<{ feed: Counts[]; tracker: Counts; policy: Counts }> {
  const get = async <T>(path: string): Promise<T> =>
    (await (await fetch(`${workerUrl}${path}`)).json()) as T;
  const [feed, tracker, policy] = await Promise.all([
    get<{ shards: Counts[] }>("/v1/feed/requests"),
    get<Counts>(`/v1/batches/${encodeURIComponent(batchId)}/requests`),
    get<{ policy: Counts }>("/v1/policy/requests"),
  ]);
  return { feed: feed.shards, tracker, policy: policy.policy };
}

function minus(after: Counts, before: Counts | undefined): Counts {
  // An object evicted between readings starts again at 0 (counters are in memory): then its whole count is the delta.
  if (before && after.total < before.total) return after;
  const by_method = Object.fromEntries(
    Object.entries(after.by_method)
      .map(([m, n]) => [m, n - (before?.by_method[m] ?? 0)])
      .filter(([, n]) => (n as number) > 0),
  );
  return { total: after.total - (before?.total ?? 0), by_method };
}

function perRollout(label: string, counts: Counts, rollouts: number): string {
  const methods = Object.entries(counts.by_method)
    .map(([m, n]) => `${m} ${(n / rollouts).toFixed(3)}`)
    .join(", ");
  return `${label}: ${(counts.total / rollouts).toFixed(3)} requests/rollout (${methods || "none"})`;
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
  try {
    const batchId = `drain-${Date.now()}`;
    if (!options.compaction)
      await fetch(`${stack.workerUrl}/v1/feed/config`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ pack_compaction_min_bytes: 0 }),
      });
    const problem = await sizedProblem(simulator.url, options.promptTokens);
    const cpu0 = stack.cpu().worker;
    const empty = { total: 0, by_method: {} };
    const run = await publishDrainGroups(stack.workerUrl, problem, {
      batchId,
      groups: options.groups,
      n: options.n,
      promptTokens: options.promptTokens,
      responseTokens: options.responseTokens,
      concurrency: 32,
    });
    const settleMs = await untilGroupsReady(stack.workerUrl, batchId, options.groups);
    const cpuMs = stack.cpu().worker - cpu0;
    const published = await resultPathCounts(stack.workerUrl, batchId);
    console.log(
      `bench:drain --from-worker — ${options.groups} groups × ${options.n} samples of ~${options.promptTokens} + ${options.responseTokens} tokens, ` +
        `published through the real sink in ${(run.wallMs / 1000).toFixed(1)} s (+${(settleMs / 1000).toFixed(1)} s until every group was ready); ` +
        `workerd CPU for publication, ingestion, packing and compaction: ${(cpuMs / run.rollouts).toFixed(2)} ms/rollout${options.vars.FEED_GROUP_PACKS === "off" ? " (group packs off)" : ""}${options.compaction ? "" : " (compaction off)"}${options.vars.FEED_STREAMED_PULLS === "off" ? " (streamed pulls off)" : ""}`,
    );
    const args = [
      "--url",
      stack.workerUrl,
      "--floor-url",
      floor.url,
      "--batch-id",
      batchId,
      "--samples",
      String(options.groups * options.n),
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
    ];
    // What publication set going runs on in the same workerd (pack compaction of a batch's tail,
    // a session's own delivery check 15 s on when the consumer could not confirm its result):
    // drain only once it is quiet, or that would be timed as the pull's cost.
    const quietStarted = performance.now();
    await untilQuiet(() => stack.cpu().worker, 2_000, 150, 240_000);
    console.log(
      `waited ${((performance.now() - quietStarted) / 1000).toFixed(0)} s for workerd to be quiet before draining`,
    );
    const rollouts = run.rollouts;
    const feedTotals = published.feed.map((shard) => minus(shard, undefined));
    const busiest = Math.max(...feedTotals.map((c) => c.total));
    console.log(
      `result path, requests per rollout while ${rollouts} rollouts were published (the objects' own counters; ${feedTotals.length} feed shard${feedTotals.length > 1 ? "s" : ""}):`,
    );
    console.log(
      `  ${perRollout(
        "feed shards, all",
        feedTotals.reduce(
          (a, b) => ({
            total: a.total + b.total,
            by_method: Object.fromEntries(
              [...new Set([...Object.keys(a.by_method), ...Object.keys(b.by_method)])].map((m) => [
                m,
                (a.by_method[m] ?? 0) + (b.by_method[m] ?? 0),
              ]),
            ),
          }),
          empty,
        ),
        rollouts,
      )}; busiest shard ${(busiest / rollouts).toFixed(3)}`,
    );
    console.log(`  ${perRollout("batch tracker", published.tracker, rollouts)}`);
    // Deployment-wide: it must see nothing per rollout (runners' claims read the policy from admission shards).
    console.log(`  ${perRollout("policy object", published.policy, rollouts)}`);
    const code = await runPython(options.python, args);
    const drained = await resultPathCounts(stack.workerUrl, batchId);
    // A shard idle while the floor drained may have been evicted: its in-memory counters then
    // restarted at 0 and hold only what came after, so no difference of them counts the drains.
    const restarted = drained.feed.some(
      (shard, i) => shard.total < (published.feed[i]?.total ?? 0),
    );
    const pullFeed = drained.feed.map((shard, i) => minus(shard, published.feed[i]));
    const pulls = Math.max(
      1,
      Math.round(
        pullFeed.reduce((n, c) => n + (c.by_method.pull ?? 0), 0) / Math.max(1, pullFeed.length),
      ),
    );
    console.log(
      restarted
        ? "the drains' requests: not counted (a feed shard was evicted after the drains, so its in-memory counters restarted)"
        : `the drains' requests (${pulls} pulls, each after one policy fence): feed shards ${pullFeed.map((c) => c.total).join(" + ")} (${JSON.stringify(pullFeed[0]?.by_method ?? {})} in the first)`,
    );
    return code;
  } finally {
    await floor.stop();
    await stack.stop();
    await simulator.stop();
  }
}
