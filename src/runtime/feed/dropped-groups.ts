/**
 * @module The feed's memory of groups it dropped instead of delivering (too stale, or withheld
 * by their verdict: `drop-group.ts` records both), by batch. A consumer waiting for one batch's
 * groups learns from its pulls which will never come, instead of waiting for its own timeout.
 */
import type { SqlPort, SqlValue } from "../../ports";
import { type BatchSelector, DroppedGroup, MAX_REPORTED_DROPS } from "../../schemas/feed";

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS dropped (
     uid TEXT PRIMARY KEY,
     batch_id TEXT NOT NULL,
     dropped_at INTEGER NOT NULL,
     value TEXT NOT NULL
   )`,
  `CREATE INDEX IF NOT EXISTS dropped_batch ON dropped (batch_id, uid)`,
  `CREATE INDEX IF NOT EXISTS dropped_at ON dropped (dropped_at)`,
];

/** Dropped groups of batches (groups of no batch are never selected by batch, so never kept). */
export class DroppedGroups {
  readonly #sql: SqlPort;

  constructor(sql: SqlPort) {
    this.#sql = sql;
  }

  /** Creates the table if it does not exist (idempotent). */
  migrate(): void {
    for (const statement of SCHEMA) this.#sql.exec(statement);
  }

  /** Validates and remembers one dropped group. */
  record(group: DroppedGroup): void {
    const g = DroppedGroup.parse(group);
    this.#sql.exec(
      `INSERT OR REPLACE INTO dropped (uid, batch_id, dropped_at, value) VALUES (?, ?, ?, ?)`,
      g.uid,
      g.batch_id,
      g.dropped_at,
      JSON.stringify(g),
    );
  }

  /**
   * The dropped groups of the batches `selector` names, by batch then uid, at most
   * MAX_REPORTED_DROPS; none when it names no batch (an unfiltered consumer waits for no batch).
   */
  ofBatches(selector: BatchSelector): DroppedGroup[] {
    const out: DroppedGroup[] = [];
    const seen = new Set<string>(); // an id and a prefix may both select a batch
    const take = (query: string, ...bindings: SqlValue[]) => {
      if (out.length >= MAX_REPORTED_DROPS) return;
      const rows = this.#sql
        .exec<{ uid: string; value: string }>(
          `${query} ORDER BY batch_id, uid LIMIT ?`,
          ...bindings,
          MAX_REPORTED_DROPS - out.length,
        )
        .toArray();
      for (const row of rows) {
        if (seen.has(row.uid)) continue;
        seen.add(row.uid);
        out.push(JSON.parse(row.value) as DroppedGroup); // validated when recorded
      }
    };
    for (const id of selector.batch_id ?? [])
      take(`SELECT uid, value FROM dropped WHERE batch_id = ?`, id);
    for (const prefix of selector.batch_prefix ?? [])
      take(
        `SELECT uid, value FROM dropped WHERE substr(batch_id, 1, ?) = ?`,
        prefix.length,
        prefix,
      );
    return out;
  }

  /** How many groups each batch has dropped, by reason (every batch that dropped any). */
  countsByBatch(): Array<{ batch_id: string; reason: string; n: number }> {
    return this.#sql
      .exec<{ batch_id: string; reason: string; n: number }>(
        `SELECT batch_id, json_extract(value, '$.reason') AS reason, COUNT(*) AS n FROM dropped GROUP BY batch_id, reason`,
      )
      .toArray();
  }

  /** Forgets groups dropped before `before`. */
  prune(before: number): void {
    this.#sql.exec(`DELETE FROM dropped WHERE dropped_at < ?`, before);
  }
}
