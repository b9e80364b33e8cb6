/**
 * @module SQLite rows read and written per step, from the objects' own cursors: every session of
 * the run (`GET /v1/rollouts/:id/storage`) and the admission shards (`GET /v1/policy/requests`).
 * The figures `docs/scale.md` prices SQLite by.
 */
import type { RolloutClient } from "../scripts/rollout-client";
import type { SqlCounts } from "../src/runtime/sql-counter";
import type { ObjectRequests } from "./object-requests";

const ZERO: SqlCounts = { statements: 0, rows_read: 0, rows_written: 0 };

function add(a: SqlCounts, b: SqlCounts, sign = 1): SqlCounts {
  return { statements: a.statements + sign * b.statements, rows_read: a.rows_read + sign * b.rows_read, rows_written: a.rows_written + sign * b.rows_written };
}

/** The sum over the sessions of `ids` (read 16 at a time, outside any timed window). */
export async function sessionStorage(client: RolloutClient, ids: string[]): Promise<SqlCounts> {
  let total = ZERO;
  for (let i = 0; i < ids.length; i += 16) for (const counts of await Promise.all(ids.slice(i, i + 16).map((id) => client.storage(id)))) total = add(total, counts);
  return total;
}

/** What the shards ran between two readings (a shard evicted meanwhile restarts at 0: its whole count is the delta). */
export function shardStorage(before: ObjectRequests, after: ObjectRequests): SqlCounts {
  let total = ZERO;
  after.shards.forEach((shard, i) => {
    const now = shard.sql ?? ZERO;
    const then = before.shards[i]?.sql ?? ZERO;
    total = add(total, now.statements >= then.statements ? add(now, then, -1) : now);
  });
  return total;
}

/** The bench line: rows written and read and statements per step, split by object kind. */
export function formatStorage(sessions: SqlCounts, shards: SqlCounts, steps: number): string {
  const per = (n: number) => (n / Math.max(1, steps)).toFixed(2);
  const all = add(sessions, shards);
  return (
    `SQLite per step, from the objects' cursors: rows written ${per(all.rows_written)} (sessions ${per(sessions.rows_written)}, shards ${per(shards.rows_written)}), ` +
    `rows read ${per(all.rows_read)}, statements ${per(all.statements)} (sessions ${per(sessions.statements)}, shards ${per(shards.statements)}); whole rollouts included`
  );
}
