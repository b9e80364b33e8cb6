/** @module The `meta` key/value table every Durable Object here keeps its single-row state in. */
import type { SqlPort } from "../ports";

/**
 * The statement that creates the table (each store runs it with its own migrations). One B-tree
 * keyed by `key` (`WITHOUT ROWID`): a new key writes one row, not a row and an index entry (both
 * billed). Objects created before keep their rowid table, which the same statements serve.
 */
export const CREATE_META_TABLE = `CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`;

/** The stored text under `key`, or undefined. */
export function readMetaText(sql: SqlPort, key: string): string | undefined {
  return sql.exec<{ value: string }>(`SELECT value FROM meta WHERE key = ?`, key).toArray()[0]
    ?.value;
}

/** Stores `text` under `key`, replacing what was there. */
export function writeMetaText(sql: SqlPort, key: string, text: string): void {
  sql.exec(
    `INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
    key,
    text,
  );
}
