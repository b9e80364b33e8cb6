/**
 * @module What a run's rollouts cost in Durable Object units, from the objects' own counters:
 * requests served and SQLite rows read and written, by every session of the run
 * (`GET /v1/rollouts/:id/usage`) and by the policy object and the admission shards
 * (`GET /v1/policy/requests`). The per-step figures docs/scale.md prices.
 */
import type { RolloutClient } from "../../scripts/rollout-client";
import type { SqlCounts } from "../../src/runtime/sql-counter";
import { addSql, NO_SQL, type ObjectRequests } from "./object-requests";

/** One kind of object's share of a run. */
export interface KindUsage {
  requests: number;
  byMethod: Record<string, number>;
  sqlite: SqlCounts;
}

/** The sessions' share, and how many of them it covers. */
export interface SessionUsage extends KindUsage {
  /** Sessions whose counters cover the whole rollout. */
  counted: number;
  /** Sessions read. */
  read: number;
}

/**
 * The sessions of `ids`, summed (read 16 at a time, outside any timed window). Counters live in
 * memory, and workerd evicts an idle object within seconds: a session whose counters do not
 * include its own `create` was evicted and restarted since, so they miss part of the rollout; it
 * is left out, and per-step figures use the sessions counted.
 */
export async function sessionUsage(client: RolloutClient, ids: string[]): Promise<SessionUsage> {
  const total: SessionUsage = { requests: 0, byMethod: {}, sqlite: NO_SQL, counted: 0, read: 0 };
  for (let i = 0; i < ids.length; i += 16) {
    for (const usage of await Promise.all(ids.slice(i, i + 16).map((id) => client.usage(id)))) {
      total.read++;
      if (!usage.requests.by_method.create) continue;
      total.counted++;
      total.requests += usage.requests.total;
      for (const [method, n] of Object.entries(usage.requests.by_method))
        total.byMethod[method] = (total.byMethod[method] ?? 0) + n;
      total.sqlite = addSql(total.sqlite, usage.sqlite);
    }
  }
  return total;
}

/** Adds `b` into `a` (sessions read in several rounds). */
export function addSessionUsage(a: SessionUsage, b: SessionUsage): SessionUsage {
  const byMethod = { ...a.byMethod };
  for (const [method, n] of Object.entries(b.byMethod))
    byMethod[method] = (byMethod[method] ?? 0) + n;
  return {
    requests: a.requests + b.requests,
    byMethod,
    sqlite: addSql(a.sqlite, b.sqlite),
    counted: a.counted + b.counted,
    read: a.read + b.read,
  };
}

/** No sessions read yet. */
export const NO_SESSIONS: SessionUsage = {
  requests: 0,
  byMethod: {},
  sqlite: NO_SQL,
  counted: 0,
  read: 0,
};

/** The shards and the policy object together, from a reading of what they served during a run (`requestsBetween`). */
export function sharedObjectUsage(served: ObjectRequests): KindUsage {
  const total: KindUsage = { requests: 0, byMethod: {}, sqlite: NO_SQL };
  for (const counts of [...served.shards, served.policy]) {
    total.requests += counts.total;
    for (const [method, n] of Object.entries(counts.by_method))
      total.byMethod[method] = (total.byMethod[method] ?? 0) + n;
    total.sqlite = addSql(total.sqlite, counts.sql ?? NO_SQL);
  }
  return total;
}

/**
 * The bench lines: Durable Object requests and SQLite rows per step, split by object kind. Session
 * figures are per step of the sessions counted (`stepsPerRollout` each); shard figures per step of the run.
 */
export function formatUsage(
  sessions: SessionUsage,
  shared: KindUsage,
  steps: number,
  stepsPerRollout: number,
): string[] {
  const sessionSteps = Math.max(1, sessions.counted * stepsPerRollout);
  const perSession = (n: number) => n / sessionSteps;
  const perShared = (n: number) => n / Math.max(1, steps);
  const f = (n: number) => n.toFixed(2);
  const methods = Object.entries(sessions.byMethod)
    .sort((a, b) => b[1] - a[1])
    .map(([method, n]) => `${method} ${f(perSession(n))}`)
    .join(", ");
  const coverage =
    sessions.counted === sessions.read
      ? ""
      : ` (${sessions.counted} of ${sessions.read} sessions counted: the rest were evicted and restarted before they were read)`;
  return [
    `Durable Object requests per step, from the objects' counters: ${f(perSession(sessions.requests) + perShared(shared.requests))} (sessions ${f(perSession(sessions.requests))}: ${methods}; shards and policy ${f(perShared(shared.requests))}); whole rollouts included${coverage}`,
    `SQLite per step, from the objects' cursors: rows written ${f(perSession(sessions.sqlite.rows_written) + perShared(shared.sqlite.rows_written))} (sessions ${f(perSession(sessions.sqlite.rows_written))}, shards ${f(perShared(shared.sqlite.rows_written))}), ` +
      `rows read ${f(perSession(sessions.sqlite.rows_read) + perShared(shared.sqlite.rows_read))}, statements ${f(perSession(sessions.sqlite.statements) + perShared(shared.sqlite.statements))} ` +
      `(sessions ${f(perSession(sessions.sqlite.statements))}, shards ${f(perShared(shared.sqlite.statements))})`,
  ];
}

/** Per step, summed over sessions (per counted session step) and shared objects (per step of the run). */
export function perStep(
  sessions: SessionUsage,
  shared: KindUsage,
  steps: number,
  stepsPerRollout: number,
  pick: (usage: KindUsage) => number,
): number {
  return (
    pick(sessions) / Math.max(1, sessions.counted * stepsPerRollout) +
    pick(shared) / Math.max(1, steps)
  );
}
