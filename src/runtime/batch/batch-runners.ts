/** @module The runners working on one batch: counters per runner from session events, and the view. */
import type { Clock, SqlPort } from "../../ports";
import { BatchRunner, type BatchRunners, RunnerEvent } from "../../schemas/batch-runners";

const MIGRATIONS = [
  `CREATE TABLE IF NOT EXISTS runners (
     runner_id TEXT PRIMARY KEY,
     claimed INTEGER NOT NULL DEFAULT 0,
     finished INTEGER NOT NULL DEFAULT 0,
     released INTEGER NOT NULL DEFAULT 0,
     lost INTEGER NOT NULL DEFAULT 0,
     lease_ms INTEGER NOT NULL,
     first_seen_at INTEGER NOT NULL,
     last_seen_at INTEGER NOT NULL,
     last_lost_at INTEGER
   )`,
];

/** Runners listed by `GET /v1/batches/:id`, most recently seen first (the totals count all of them). */
export const RUNNERS_LISTED = 100;

interface RunnerRow {
  runner_id: string;
  claimed: number;
  finished: number;
  released: number;
  lost: number;
  lease_ms: number;
  first_seen_at: number;
  last_seen_at: number;
  last_lost_at: number | null;
  [key: string]: string | number | null;
}

/**
 * What the batch knows about its runners. Sessions report claims, outcomes and lost leases (one
 * RPC per attempt event, never per model call); heartbeats touch `last_seen_at` once per runner and
 * heartbeat request. Display only: every rollout's own session is the truth about its attempts.
 */
export class BatchRunnersStore {
  readonly #sql: SqlPort;
  readonly #now: Clock;

  constructor(sql: SqlPort, now: Clock) {
    this.#sql = sql;
    this.#now = now;
    for (const statement of MIGRATIONS) sql.exec(statement);
  }

  /** Counts one event (validated: RPC callers are not trusted). */
  record(input: unknown): void {
    const event = RunnerEvent.parse(input);
    const column = event.kind;
    // Only a claim carries the runner's lease; the other events keep the one it claimed with.
    this.#sql.exec(
      `INSERT INTO runners (runner_id, ${column}, lease_ms, first_seen_at, last_seen_at, last_lost_at) VALUES (?, 1, ?, ?, ?, ?)
       ON CONFLICT(runner_id) DO UPDATE SET ${column} = runners.${column} + 1,
         lease_ms = CASE WHEN ? = 'claimed' THEN excluded.lease_ms ELSE runners.lease_ms END,
         last_seen_at = CASE WHEN ? = 'lost' THEN runners.last_seen_at ELSE MAX(runners.last_seen_at, excluded.last_seen_at) END,
         last_lost_at = COALESCE(excluded.last_lost_at, runners.last_lost_at)`,
      event.runner_id,
      event.lease_ms,
      event.at,
      event.kind === "lost" ? 0 : event.at,
      event.kind === "lost" ? event.at : null,
      event.kind,
      event.kind,
    );
  }

  /** A heartbeat from a runner this batch knows (an unknown one is ignored: it claimed nothing here). */
  seen(runnerId: string, leaseMs: number): void {
    this.#sql.exec(
      `UPDATE runners SET last_seen_at = MAX(last_seen_at, ?), lease_ms = ? WHERE runner_id = ?`,
      this.#now(),
      leaseMs,
      runnerId,
    );
  }

  /** The runners part of the batch view. */
  view(): BatchRunners {
    const now = this.#now();
    const rows = this.#sql
      .exec<RunnerRow>(`SELECT * FROM runners ORDER BY last_seen_at DESC, runner_id`)
      .toArray();
    const runners = rows.map((row) => runnerView(row, now));
    return {
      total: runners.length,
      heartbeating: runners.filter((runner) => runner.status === "heartbeating").length,
      lost: runners.filter((runner) => runner.status === "lost").length,
      lost_attempts: rows.reduce((sum, row) => sum + row.lost, 0),
      runners: runners.slice(0, RUNNERS_LISTED),
    };
  }
}

/** One runner's status: seen within its lease → heartbeating; else lost if a lease of it expired after it was last seen, or it still holds work; else gone. */
function runnerView(row: RunnerRow, now: number): BatchRunner {
  const active = Math.max(0, row.claimed - row.finished - row.released - row.lost);
  const heartbeating = now - row.last_seen_at <= row.lease_ms;
  const lostSinceSeen = row.last_lost_at !== null && row.last_lost_at >= row.last_seen_at;
  const status =
    heartbeating && !lostSinceSeen ? "heartbeating" : lostSinceSeen || active > 0 ? "lost" : "gone";
  return BatchRunner.parse({
    runner_id: row.runner_id,
    status,
    claimed: row.claimed,
    finished: row.finished,
    released: row.released,
    lost: row.lost,
    active,
    first_seen_at: row.first_seen_at,
    last_seen_at: row.last_seen_at,
  });
}
