/** @module The `in_flight` SQLite table of an admission shard: one row per admitted call, with an expiry. */
import type { SqlPort } from "../../ports";

/** Creates the table and its expiry index (idempotent). */
export const IN_FLIGHT_MIGRATIONS = [
  `CREATE TABLE IF NOT EXISTS in_flight (
     call_id TEXT PRIMARY KEY,
     expires_at INTEGER NOT NULL,
     acquired_version INTEGER NOT NULL
   )`,
  // Counting and purging go by expiry, so neither scans the whole table.
  `CREATE INDEX IF NOT EXISTS in_flight_expires_at ON in_flight (expires_at)`,
];

/**
 * Adds the `rollout_id` column to a table created before it existed (idempotent): a rollout's
 * calls are dropped together when its driver is known dead or the rollout has ended.
 */
export function migrateInFlightRolloutColumn(sql: SqlPort): void {
  const columns = sql.exec<{ name: string }>(`PRAGMA table_info(in_flight)`).toArray();
  if (!columns.some((column) => column.name === "rollout_id")) sql.exec(`ALTER TABLE in_flight ADD COLUMN rollout_id TEXT`);
  sql.exec(`CREATE INDEX IF NOT EXISTS in_flight_rollout_id ON in_flight (rollout_id)`);
}

/** Admitted calls by id; every access is one statement by key or by the expiry index. */
export class InFlightTable {
  readonly #sql: SqlPort;

  constructor(sql: SqlPort) {
    this.#sql = sql;
  }

  /** Whether `callId` is registered and not expired at `now`. */
  isLive(callId: string, now: number): boolean {
    return this.#sql.exec(`SELECT 1 AS found FROM in_flight WHERE call_id = ? AND expires_at > ?`, callId, now).toArray().length > 0;
  }

  /** Registers a call; a call id seen before keeps its first version and the later expiry. */
  upsert(callId: string, expiresAt: number, version: number, rolloutId: string | null = null): void {
    this.#sql.exec(
      `INSERT INTO in_flight (call_id, expires_at, acquired_version, rollout_id) VALUES (?, ?, ?, ?)
       ON CONFLICT(call_id) DO UPDATE SET expires_at = MAX(expires_at, excluded.expires_at)`,
      callId,
      expiresAt,
      version,
      rolloutId,
    );
  }

  /** Forgets every call registered for `rolloutId`; returns how many there were. */
  deleteRollout(rolloutId: string): number {
    return this.#sql.exec(`DELETE FROM in_flight WHERE rollout_id = ? RETURNING call_id`, rolloutId).toArray().length;
  }

  /** Forgets a call (no-op for an unknown id). */
  delete(callId: string): void {
    this.#sql.exec(`DELETE FROM in_flight WHERE call_id = ?`, callId);
  }

  /** Drops calls whose ttl passed without a release, then counts the rest. */
  countLive(now: number): number {
    this.#sql.exec(`DELETE FROM in_flight WHERE expires_at <= ?`, now);
    return this.#sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM in_flight`).toArray()[0]?.n ?? 0;
  }
}
