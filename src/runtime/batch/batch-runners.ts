/** @module The runners working on one batch: counters per runner from session events, and the view. */
import type { Clock, SqlPort } from "../../ports";
import { BatchRunner, type BatchRunners, RunnerEvent } from "../../schemas/batch-runners";
import { ResultMessage } from "../../schemas/result-message";

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
  // One row per attempt seen (from a heartbeat, a result message or an outcome event), so each is
  // counted once as claimed and once by its outcome, whichever way and however often it is told.
  `CREATE TABLE IF NOT EXISTS runner_attempts (
     rollout_id TEXT NOT NULL,
     attempt INTEGER NOT NULL,
     outcome TEXT,
     PRIMARY KEY (rollout_id, attempt)
   ) WITHOUT ROWID`,
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

  /**
   * Counts one event (validated: RPC callers are not trusted) once per attempt: the first word of
   * an attempt counts it as claimed, its first outcome (finished, released, lost) counts that; a
   * repeat (a redelivered result, a heartbeat of an attempt already seen) writes nothing.
   */
  record(input: unknown): void {
    const event = RunnerEvent.parse(input);
    const seen = this.#sql
      .exec<{ outcome: string | null }>(
        `SELECT outcome FROM runner_attempts WHERE rollout_id = ? AND attempt = ?`,
        event.rollout_id,
        event.attempt,
      )
      .toArray()[0];
    const outcome = event.kind === "claimed" ? null : event.kind;
    const claimed = seen === undefined ? 1 : 0;
    const ended = outcome !== null && (seen === undefined || seen.outcome === null) ? 1 : 0;
    if (seen === undefined)
      this.#sql.exec(
        `INSERT INTO runner_attempts (rollout_id, attempt, outcome) VALUES (?, ?, ?)`,
        event.rollout_id,
        event.attempt,
        outcome,
      );
    else if (ended === 1)
      this.#sql.exec(
        `UPDATE runner_attempts SET outcome = ? WHERE rollout_id = ? AND attempt = ?`,
        outcome,
        event.rollout_id,
        event.attempt,
      );
    // A repeat (a heartbeat of an attempt already seen, a redelivered result) counts nothing: no
    // write (a heartbeat touches the runner once, in `seen`, not once per attempt it holds).
    if (claimed === 0 && ended === 0) return;
    const count = (kind: RunnerEvent["kind"]) =>
      kind === "claimed" ? claimed : outcome === kind ? ended : 0;
    // Only a claim carries the runner's lease; the other events keep the one it claimed with.
    this.#sql.exec(
      `INSERT INTO runners (runner_id, claimed, finished, released, lost, lease_ms, first_seen_at, last_seen_at, last_lost_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(runner_id) DO UPDATE SET claimed = runners.claimed + excluded.claimed,
         finished = runners.finished + excluded.finished, released = runners.released + excluded.released,
         lost = runners.lost + excluded.lost,
         lease_ms = CASE WHEN ? = 'claimed' THEN excluded.lease_ms ELSE runners.lease_ms END,
         last_seen_at = CASE WHEN ? = 'lost' THEN runners.last_seen_at ELSE MAX(runners.last_seen_at, excluded.last_seen_at) END,
         last_lost_at = COALESCE(excluded.last_lost_at, runners.last_lost_at)`,
      event.runner_id,
      count("claimed"),
      count("finished"),
      count("released"),
      count("lost"),
      event.lease_ms,
      event.at,
      event.kind === "lost" ? 0 : event.at,
      event.kind === "lost" && ended === 1 ? event.at : null,
      event.kind,
      event.kind,
    );
  }

  /** Counts the finish a result message reports (a runner's attempt that ended its rollout); other messages count nothing. */
  resultFinished(message: unknown): void {
    const parsed = ResultMessage.safeParse(message);
    const runner = parsed.success ? parsed.data.runner : null;
    if (!parsed.success || runner === null) return;
    this.record({
      runner_id: runner.runner_id,
      rollout_id: parsed.data.rollout_id,
      attempt: runner.attempt,
      kind: "finished",
      lease_ms: 1,
      at: parsed.data.finished_at,
    });
  }

  /**
   * A heartbeat: the runner is seen now, and each attempt it holds counts as claimed if this batch
   * had not seen it (claims reach the batch this way, not with a request per claim).
   */
  heartbeat(
    runnerId: string,
    leaseMs: number,
    attempts: ReadonlyArray<{ rollout_id: string; attempt: number }>,
  ): void {
    const at = this.#now();
    for (const { rollout_id, attempt } of attempts)
      this.record({
        runner_id: runnerId,
        rollout_id,
        attempt,
        kind: "claimed",
        lease_ms: leaseMs,
        at,
      });
    this.seen(runnerId, leaseMs);
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
