/**
 * @module The admitted calls of an admission shard, in SQLite: one row per call, with an expiry.
 * Every model call is admitted and released here, so the layout is the cheapest one that keeps
 * the sync fence durable: one B-tree, no secondary index, a drive's next admission written into
 * the row of the call it releases, other releases deleted in batches.
 */
import type { SqlPort } from "../../ports";

/**
 * One B-tree keyed by call id (`WITHOUT ROWID`): an admission writes one row and nothing else.
 * Counting by expiry and dropping a rollout's calls scan the table instead of keeping an index,
 * because they run once per sync poll or per ended rollout, and the table holds only the calls in
 * flight right now (a few hundred per shard at 100k rollouts over 256 shards).
 */
export const IN_FLIGHT_MIGRATIONS = [
  `CREATE TABLE IF NOT EXISTS in_flight_calls (
     call_id TEXT PRIMARY KEY,
     rollout_id TEXT,
     expires_at INTEGER NOT NULL,
     acquired_version INTEGER NOT NULL
   ) WITHOUT ROWID`,
];

/** A release waits at most this long to be deleted together with the releases after it. */
export const RELEASE_BATCH_MS = 50;
/** Ids bound to one delete: a Durable Object's SQLite takes at most 100 bound parameters per query (developers.cloudflare.com/durable-objects/platform/limits/). */
const MAX_BOUND_IDS = 100;
/** A batch of releases this large is deleted at once. */
const RELEASE_BATCH_MAX = 256;

/**
 * Moves the calls of the earlier layout (table `in_flight`, with two secondary indexes) into the
 * current one and drops it (idempotent): a shard that restarts on new code keeps counting the
 * calls its previous version admitted.
 */
export function migrateLegacyInFlight(sql: SqlPort): void {
  const legacy = sql
    .exec<{ name: string }>(
      `SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'in_flight'`,
    )
    .toArray();
  if (legacy.length === 0) return;
  const columns = sql.exec<{ name: string }>(`PRAGMA table_info(in_flight)`).toArray();
  const rolloutColumn = columns.some((column) => column.name === "rollout_id")
    ? "rollout_id"
    : "NULL";
  sql.exec(
    `INSERT OR IGNORE INTO in_flight_calls (call_id, rollout_id, expires_at, acquired_version)
     SELECT call_id, ${rolloutColumn}, expires_at, acquired_version FROM in_flight`,
  );
  sql.exec(`DROP TABLE in_flight`);
}

/**
 * Admitted calls by id. An admission is stored before it is answered (the fence must survive a
 * restart); a release is only remembered in memory at first and deleted with the next admission
 * or with the others released within `RELEASE_BATCH_MS`, whichever comes first. Every read first applies the releases
 * pending, so counts are exact; a restart in that window counts those few released calls until
 * they expire, which delays a sync's wait and never shortens it.
 */
export class InFlightTable {
  readonly #sql: SqlPort;
  readonly #released = new Set<string>();
  #flushTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(sql: SqlPort) {
    this.#sql = sql;
  }

  /** Whether `callId` is registered, not released and not expired at `now`. */
  isLive(callId: string, now: number): boolean {
    if (this.#released.has(callId)) return false;
    return (
      this.#sql
        .exec(
          `SELECT 1 AS found FROM in_flight_calls WHERE call_id = ? AND expires_at > ?`,
          callId,
          now,
        )
        .toArray().length > 0
    );
  }

  /**
   * Registers a call; a call id seen before (and not released) keeps its first version and the
   * later expiry. The releases pending go in the same synchronous turn, so they share the
   * admission's implicit transaction (a drive's releases ride on its next admission; deleting
   * them from a timer of their own was a second commit per call), and the first of them is not
   * deleted but becomes the new call's row: one row written per admission instead of an insert
   * and a delete (an UPDATE that changes the key is one row written, rows being what SQLite
   * storage is billed by; `admission-shard-storage.integration.test.ts` counts them).
   */
  upsert(
    callId: string,
    expiresAt: number,
    version: number,
    rolloutId: string | null = null,
  ): void {
    // A released id admitted again is a new call: its old row goes first, so it takes the new version.
    const reusable = this.#released.has(callId) ? undefined : this.#released.values().next().value;
    // OR IGNORE: when `callId` is already stored (admitted again while counted), nothing moves,
    // and the released row is deleted by the flush with the rest.
    const moved =
      reusable !== undefined &&
      this.#sql
        .exec(
          `UPDATE OR IGNORE in_flight_calls
             SET call_id = ?, rollout_id = ?, expires_at = ?, acquired_version = ?
           WHERE call_id = ? RETURNING call_id`,
          callId,
          rolloutId,
          expiresAt,
          version,
          reusable,
        )
        .toArray().length > 0;
    if (moved) this.#released.delete(reusable);
    this.flush();
    if (moved) return;
    this.#sql.exec(
      `INSERT INTO in_flight_calls (call_id, rollout_id, expires_at, acquired_version) VALUES (?, ?, ?, ?)
       ON CONFLICT(call_id) DO UPDATE SET expires_at = MAX(expires_at, excluded.expires_at)`,
      callId,
      rolloutId,
      expiresAt,
      version,
    );
  }

  /** Forgets a call (no-op for an unknown id); stored with the next batch of releases. */
  delete(callId: string): void {
    this.#released.add(callId);
    if (this.#released.size >= RELEASE_BATCH_MAX) this.flush();
    else this.#flushTimer ??= setTimeout(() => this.#flushQuietly(), RELEASE_BATCH_MS);
  }

  /** Forgets every call registered for `rolloutId`; returns how many were still live. */
  deleteRollout(rolloutId: string): number {
    this.flush();
    return this.#sql
      .exec(`DELETE FROM in_flight_calls WHERE rollout_id = ? RETURNING call_id`, rolloutId)
      .toArray().length;
  }

  /**
   * The rollouts with a call in flight, each with the oldest version its live calls were admitted
   * under: the oldest token a call still generating will hold (the staleness rule's input before the
   * call is recorded anywhere).
   */
  liveRolloutVersions(now: number): Array<{ rollout_id: string; version: number }> {
    this.flush();
    return this.#sql
      .exec<{ rollout_id: string; version: number }>(
        `SELECT rollout_id, MIN(acquired_version) AS version FROM in_flight_calls
         WHERE expires_at > ? AND rollout_id IS NOT NULL GROUP BY rollout_id`,
        now,
      )
      .toArray();
  }

  /** Drops calls whose ttl passed without a release, then counts the rest. */
  countLive(now: number): number {
    this.flush();
    this.#sql.exec(`DELETE FROM in_flight_calls WHERE expires_at <= ?`, now);
    return (
      this.#sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM in_flight_calls`).toArray()[0]?.n ??
      0
    );
  }

  /**
   * Deletes the releases pending: by key, one statement per `MAX_BOUND_IDS` ids (usually one id,
   * the call before a drive's next admission).
   */
  flush(): void {
    if (this.#flushTimer !== undefined) clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (this.#released.size === 0) return;
    const ids = [...this.#released];
    for (let at = 0; at < ids.length; at += MAX_BOUND_IDS) {
      const chunk = ids.slice(at, at + MAX_BOUND_IDS);
      this.#sql.exec(
        chunk.length === 1
          ? `DELETE FROM in_flight_calls WHERE call_id = ?`
          : `DELETE FROM in_flight_calls WHERE call_id IN (${chunk.map(() => "?").join(", ")})`,
        ...chunk,
      );
    }
    this.#released.clear();
  }

  #flushQuietly(): void {
    this.#flushTimer = undefined;
    try {
      this.flush();
    } catch (error) {
      // Kept pending: the next read or release tries again. A lost delete only over-counts.
      console.error("admission shard: deleting released calls failed", error);
      this.#flushTimer ??= setTimeout(() => this.#flushQuietly(), RELEASE_BATCH_MS * 20);
    }
  }
}
