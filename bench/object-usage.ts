/**
 * @module What a run's rollouts cost in Durable Object units, from the objects' own counters:
 * requests served and SQLite rows read and written, by every session of the run
 * (`GET /v1/rollouts/:id/usage`) and by the policy object and the admission shards
 * (`GET /v1/policy/requests`). The per-step figures docs/scale.md prices.
 */
import type { RolloutClient } from "../scripts/rollout-client";
import type { SqlCounts } from "../src/runtime/sql-counter";
import type { ObjectRequests } from "./object-requests";

const ZERO: SqlCounts = { statements: 0, rows_read: 0, rows_written: 0 };

function add(a: SqlCounts, b: SqlCounts, sign = 1): SqlCounts {
  return { statements: a.statements + sign * b.statements, rows_read: a.rows_read + sign * b.rows_read, rows_written: a.rows_written + sign * b.rows_written };
}

/** One kind of object's share of a run. */
export interface KindUsage {
  requests: number;
  byMethod: Record<string, number>;
  sqlite: SqlCounts;
}

/** The sessions of `ids`, summed (read 16 at a time, outside any timed window). */
export async function sessionUsage(client: RolloutClient, ids: string[]): Promise<KindUsage> {
  const total: KindUsage = { requests: 0, byMethod: {}, sqlite: ZERO };
  for (let i = 0; i < ids.length; i += 16) {
    for (const usage of await Promise.all(ids.slice(i, i + 16).map((id) => client.usage(id)))) {
      total.requests += usage.requests.total;
      for (const [method, n] of Object.entries(usage.requests.by_method)) total.byMethod[method] = (total.byMethod[method] ?? 0) + n;
      total.sqlite = add(total.sqlite, usage.sqlite);
    }
  }
  return total;
}

/** What the shards and the policy object did between two readings (one evicted meanwhile restarts at 0: its whole count is the delta). */
export function sharedObjectUsage(before: ObjectRequests, after: ObjectRequests): KindUsage {
  const total: KindUsage = { requests: 0, byMethod: {}, sqlite: ZERO };
  const objects = [...after.shards.map((shard, i) => [before.shards[i], shard] as const), [before.policy, after.policy] as const];
  for (const [then, now] of objects) {
    const restarted = !then || now.total < then.total;
    total.requests += restarted ? now.total : now.total - then.total;
    for (const [method, n] of Object.entries(now.by_method)) {
      // requestCounts is the bench reading the counters, not a request of the run.
      if (method === "requestCounts") continue;
      total.byMethod[method] = (total.byMethod[method] ?? 0) + (restarted ? n : n - (then.by_method[method] ?? 0));
    }
    const sqlNow = now.sql ?? ZERO;
    total.sqlite = add(total.sqlite, restarted ? sqlNow : add(sqlNow, then.sql ?? ZERO, -1));
  }
  total.requests = Object.values(total.byMethod).reduce((sum, n) => sum + n, 0);
  return total;
}

/** The bench lines: Durable Object requests and SQLite rows per step, split by object kind. */
export function formatUsage(sessions: KindUsage, shared: KindUsage, steps: number): string[] {
  const per = (n: number) => (n / Math.max(1, steps)).toFixed(2);
  const methods = Object.entries(sessions.byMethod).sort((a, b) => b[1] - a[1]).map(([method, n]) => `${method} ${per(n)}`).join(", ");
  const rows = add(sessions.sqlite, shared.sqlite);
  return [
    `Durable Object requests per step, from the objects' counters: ${per(sessions.requests + shared.requests)} (sessions ${per(sessions.requests)}: ${methods}; shards and policy ${per(shared.requests)}); whole rollouts included`,
    `SQLite per step, from the objects' cursors: rows written ${per(rows.rows_written)} (sessions ${per(sessions.sqlite.rows_written)}, shards ${per(shared.sqlite.rows_written)}), ` +
      `rows read ${per(rows.rows_read)}, statements ${per(rows.statements)} (sessions ${per(sessions.sqlite.statements)}, shards ${per(shared.sqlite.statements)})`,
  ];
}
