/** @module One shard of a runner agent's claim queue: offers in FIFO order, hidden while a claim settles. */
import type { Clock, SqlPort } from "../../ports";

/** How long a taken offer stays hidden: a claim route that died between taking and settling it is retried after this. */
export const OFFER_HIDE_MS = 30_000;

/** An offer handed to a claim route; `version` makes `settle` a no-op if the rollout was offered again meanwhile. */
export interface TakenOffer {
  rollout_id: string;
  version: number;
}

const MIGRATIONS = [
  `CREATE TABLE IF NOT EXISTS offers (
     rollout_id TEXT PRIMARY KEY,
     version INTEGER NOT NULL,
     offered_at INTEGER NOT NULL,
     visible_at INTEGER NOT NULL
   )`,
  `CREATE INDEX IF NOT EXISTS offers_visible ON offers (visible_at, offered_at)`,
];

/**
 * Rollouts waiting for a runner, one row each. An offer is only a hint of where to look: the
 * rollout's session grants the claim (exactly once per attempt), so a stale or duplicate offer
 * costs one refused claim and is then settled away. Nothing here is per model call.
 */
export class ClaimQueueCore {
  readonly #sql: SqlPort;
  readonly #now: Clock;

  constructor(sql: SqlPort, now: Clock) {
    this.#sql = sql;
    this.#now = now;
    for (const statement of MIGRATIONS) sql.exec(statement);
  }

  /** Offers a rollout (again): visible at once; a new version, so a claim settling the old offer leaves this one. */
  offer(rolloutId: string): void {
    const now = this.#now();
    this.#sql.exec(
      `INSERT INTO offers (rollout_id, version, offered_at, visible_at) VALUES (?, 1, ?, ?)
       ON CONFLICT(rollout_id) DO UPDATE SET version = offers.version + 1, visible_at = excluded.visible_at`,
      rolloutId,
      now,
      now,
    );
  }

  /** Up to `max` visible offers, oldest first, hidden for `OFFER_HIDE_MS` while the caller claims them. */
  take(max: number): TakenOffer[] {
    const now = this.#now();
    const rows = this.#sql
      .exec<{ rollout_id: string; version: number }>(
        `SELECT rollout_id, version FROM offers WHERE visible_at <= ? ORDER BY offered_at, rollout_id LIMIT ?`,
        now,
        Math.max(0, Math.trunc(max)),
      )
      .toArray();
    for (const row of rows)
      this.#sql.exec(
        `UPDATE offers SET visible_at = ? WHERE rollout_id = ?`,
        now + OFFER_HIDE_MS,
        row.rollout_id,
      );
    return rows.map((row) => ({ rollout_id: row.rollout_id, version: row.version }));
  }

  /** Removes offers whose claim settled (granted, or refused for good), unless they were offered again since. */
  settle(offers: readonly TakenOffer[]): void {
    for (const offer of offers)
      this.#sql.exec(
        `DELETE FROM offers WHERE rollout_id = ? AND version = ?`,
        offer.rollout_id,
        offer.version,
      );
  }

  /** Offers waiting (visible or being claimed). */
  size(): { waiting: number; visible: number } {
    const now = this.#now();
    const row = this.#sql
      .exec<{ waiting: number; visible: number }>(
        `SELECT COUNT(*) AS waiting, COALESCE(SUM(visible_at <= ?), 0) AS visible FROM offers`,
        now,
      )
      .toArray()[0]!;
    return { waiting: row.waiting, visible: row.visible };
  }
}
