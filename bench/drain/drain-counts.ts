/**
 * @module The result path's objects' own request counters (feed shards, batch trackers, the
 * policy object), read before and after a phase of `bench:drain --from-worker` and summed over
 * its phases, per rollout.
 */

/** One object's counters: requests in all and by RPC method. */
export interface Counts {
  total: number;
  by_method: Record<string, number>;
}

/** The counters of the feed shards, the named batches' trackers (summed) and the policy object. */
export interface PathCounts {
  feed: Counts[];
  tracker: Counts;
  policy: Counts;
}

/** No requests. */
export const NO_COUNTS: Counts = { total: 0, by_method: {} };

/** The two counters added. */
export function plus(a: Counts, b: Counts): Counts {
  const methods = new Set([...Object.keys(a.by_method), ...Object.keys(b.by_method)]);
  return {
    total: a.total + b.total,
    by_method: Object.fromEntries(
      [...methods].map((m) => [m, (a.by_method[m] ?? 0) + (b.by_method[m] ?? 0)]),
    ),
  };
}

/** Reads every counter once. */
export async function resultPathCounts(workerUrl: string, batchIds: string[]): Promise<PathCounts> {
  const get = async <T>(path: string): Promise<T> =>
    (await (await fetch(`${workerUrl}${path}`)).json()) as T;
  const [feed, trackers, policy] = await Promise.all([
    get<{ shards: Counts[] }>("/v1/feed/requests"),
    Promise.all(
      batchIds.map((id) => get<Counts>(`/v1/batches/${encodeURIComponent(id)}/requests`)),
    ),
    get<{ policy: Counts }>("/v1/policy/requests"),
  ]);
  return { feed: feed.shards, tracker: trackers.reduce(plus, NO_COUNTS), policy: policy.policy };
}

/**
 * `after - before`, and whether the object restarted in between (counters are in memory: an
 * object evicted between readings starts again at 0, and then only its count since is known).
 */
export function minus(
  after: Counts,
  before: Counts | undefined,
): { delta: Counts; restarted: boolean } {
  if (before && after.total < before.total) return { delta: after, restarted: true };
  const by_method = Object.fromEntries(
    Object.entries(after.by_method)
      .map(([m, n]) => [m, n - (before?.by_method[m] ?? 0)])
      .filter(([, n]) => (n as number) > 0),
  );
  return { delta: { total: after.total - (before?.total ?? 0), by_method }, restarted: false };
}

/** What a phase added to every counter; `restarted` names the objects whose counters restarted in it. */
export function phaseCounts(
  before: PathCounts,
  after: PathCounts,
): { feed: Counts[]; tracker: Counts; policy: Counts; restarted: string[] } {
  const feed = after.feed.map((shard, i) => minus(shard, before.feed[i]));
  const tracker = minus(after.tracker, before.tracker);
  const policy = minus(after.policy, before.policy);
  const restarted = [
    ...feed.flatMap((one, i) => (one.restarted ? [`feed shard ${i}`] : [])),
    ...(tracker.restarted ? ["a batch tracker"] : []),
    ...(policy.restarted ? ["policy object"] : []),
  ];
  return {
    feed: feed.map((one) => one.delta),
    tracker: tracker.delta,
    policy: policy.delta,
    restarted,
  };
}

/** `label: 0.123 requests/rollout (method 0.1, …)`. */
export function perRollout(label: string, counts: Counts, rollouts: number): string {
  const methods = Object.entries(counts.by_method)
    .map(([m, n]) => `${m} ${(n / rollouts).toFixed(3)}`)
    .join(", ");
  return `${label}: ${(counts.total / rollouts).toFixed(3)} requests/rollout (${methods || "none"})`;
}
