/**
 * @module Requests the policy object and the admission shards served, read from their own
 * counters (`GET /v1/policy/requests`): the bench line "singleton requests per model call".
 */
import type { SqlCounts } from "../../src/runtime/sql-counter";

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
export function formatObjectRequests(
  before: ObjectRequests,
  after: ObjectRequests,
  modelCalls: number,
): string[] {
  // An object evicted between readings restarts at 0; then its whole count is the delta.
  const delta = (a: Counts | undefined, b: Counts) =>
    a && b.total >= a.total ? b.total - a.total : b.total;
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
    for (const counts of prefix === "policy" ? [reading.policy] : reading.shards)
      for (const [method, n] of Object.entries(counts.by_method))
        totals[method] = (totals[method] ?? 0) + n;
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

/** No statements, no rows. */
export const NO_SQL: SqlCounts = { statements: 0, rows_read: 0, rows_written: 0 };

/** `a + sign × b`, field by field. */
export function addSql(a: SqlCounts, b: SqlCounts, sign = 1): SqlCounts {
  return {
    statements: a.statements + sign * b.statements,
    rows_read: a.rows_read + sign * b.rows_read,
    rows_written: a.rows_written + sign * b.rows_written,
  };
}

function countsDelta(then: Counts | undefined, now: Counts): Counts {
  // An object evicted between readings restarts at 0; then its whole count is the delta.
  if (!then || now.total < then.total) return now;
  const by_method: Record<string, number> = {};
  for (const [method, n] of Object.entries(now.by_method))
    by_method[method] = n - (then.by_method[method] ?? 0);
  return {
    total: now.total - then.total,
    by_method,
    ...(now.sql ? { sql: addSql(now.sql, then.sql ?? NO_SQL, -1) } : {}),
  };
}

function countsSum(a: Counts, b: Counts): Counts {
  const by_method = { ...a.by_method };
  for (const [method, n] of Object.entries(b.by_method))
    by_method[method] = (by_method[method] ?? 0) + n;
  return { total: a.total + b.total, by_method, sql: addSql(a.sql ?? NO_SQL, b.sql ?? NO_SQL) };
}

/** A reading of nothing: the base the summed deltas of several runs are read against. */
export const NO_REQUESTS: ObjectRequests = { policy: { total: 0, by_method: {} }, shards: [] };

/**
 * What each object served between two readings, as a reading from zero. Read around each timed
 * run, not around a whole bench: workerd evicts an idle object within seconds, and its counters
 * (in memory) start again at 0.
 */
export function requestsBetween(before: ObjectRequests, after: ObjectRequests): ObjectRequests {
  return {
    policy: countsDelta(before.policy, after.policy),
    shards: after.shards.map((shard, i) => countsDelta(before.shards[i], shard)),
  };
}

/** Two readings from zero added up, object by object. */
export function addRequests(a: ObjectRequests, b: ObjectRequests): ObjectRequests {
  const shards = Array.from({ length: Math.max(a.shards.length, b.shards.length) }, (_, i) =>
    countsSum(
      a.shards[i] ?? { total: 0, by_method: {} },
      b.shards[i] ?? { total: 0, by_method: {} },
    ),
  );
  return { policy: countsSum(a.policy, b.policy), shards };
}
