/**
 * @module Requests the policy object and the admission shards served, read from their own
 * counters (`GET /v1/policy/requests`): the bench line "singleton requests per model call".
 */
import type { SqlCounts } from "../src/runtime/sql-counter";

interface Counts {
  total: number;
  by_method: Record<string, number>;
  /** SQLite statements and rows of the same span (shards count them). */
  sql?: SqlCounts;
}

/** One reading of the counters. */
export interface ObjectRequests {
  policy: Counts;
  shards: Counts[];
}

/** Reads the counters through the Worker. */
export async function readObjectRequests(workerUrl: string): Promise<ObjectRequests> {
  const response = await fetch(`${workerUrl}/v1/policy/requests`);
  if (!response.ok) throw new Error(`GET /v1/policy/requests answered ${response.status}`);
  return (await response.json()) as ObjectRequests;
}

/**
 * The bench's lines: requests to the deployment-wide policy object per model call (the figure
 * that must be 0), and to the admission shards, with the busiest shard's share.
 */
export function formatObjectRequests(before: ObjectRequests, after: ObjectRequests, modelCalls: number): string[] {
  // An object evicted between readings restarts at 0; then its whole count is the delta.
  const delta = (a: Counts | undefined, b: Counts) => (a && b.total >= a.total ? b.total - a.total : b.total);
  const singleton = delta(before.policy, after.policy);
  const perShard = after.shards.map((shard, i) => delta(before.shards[i], shard));
  const shardTotal = perShard.reduce((sum, n) => sum + n, 0);
  return [
    `singleton requests per model call: ${(singleton / Math.max(1, modelCalls)).toFixed(3)} (PolicyStore served ${singleton} requests during ${modelCalls} model calls, counted by the object itself)`,
    `admission-shard requests per model call: ${(shardTotal / Math.max(1, modelCalls)).toFixed(2)} over ${perShard.length} shards (busiest shard ${Math.max(0, ...perShard)} of ${shardTotal})`,
  ];
}

/** Requests per RPC method between two readings, over the policy object and all shards (which methods make the count). */
export function byMethodLine(before: ObjectRequests, after: ObjectRequests): string {
  const sum = (reading: ObjectRequests, prefix: "policy" | "shards") => {
    const totals: Record<string, number> = {};
    for (const counts of prefix === "policy" ? [reading.policy] : reading.shards) for (const [method, n] of Object.entries(counts.by_method)) totals[method] = (totals[method] ?? 0) + n;
    return totals;
  };
  const parts = (["policy", "shards"] as const).map((which) => {
    const a = sum(before, which);
    const b = sum(after, which);
    const methods = Object.keys(b).filter((m) => b[m]! - (a[m] ?? 0) !== 0);
    return `${which}: ${methods.length === 0 ? "none" : methods.map((m) => `${m} ${b[m]! - (a[m] ?? 0)}`).join(", ")}`;
  });
  return `requests by method — ${parts.join("; ")}`;
}
