/**
 * @module Session tables most rollouts never write, created by the first write that needs them:
 * every table created is rows written to `sqlite_master` (billed) in each of a deployment's
 * sessions, and a rollout with no spans and no value over ~900 KB needs neither table.
 */
import type { SqlPort } from "../../../ports";
import { CREATE_VALUE_PARTS_TABLE } from "../../value-parts";

const LAZY_TABLES = {
  spans: `CREATE TABLE IF NOT EXISTS spans (sequence_id INTEGER PRIMARY KEY, body TEXT NOT NULL)`,
  value_parts: CREATE_VALUE_PARTS_TABLE,
} as const;

/** A table created on first write. */
export type LazyTable = keyof typeof LAZY_TABLES;

/**
 * Which lazy tables of one object's storage exist, asked of SQLite once each, then known: the
 * object is its storage's only writer, so a table found missing stays missing until `ensure`.
 */
export class LazyTables {
  readonly #sql: SqlPort;
  readonly #exists = new Map<LazyTable, boolean>();

  constructor(sql: SqlPort) {
    this.#sql = sql;
  }

  /** Whether `name` exists (a reader finds none when nothing was ever written). */
  has(name: LazyTable): boolean {
    let found = this.#exists.get(name);
    if (found === undefined) {
      found =
        this.#sql
          .exec(`SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = ?`, name)
          .toArray().length > 0;
      this.#exists.set(name, found);
    }
    return found;
  }

  /** Creates `name` before its first write (idempotent). */
  ensure(name: LazyTable): void {
    if (this.#exists.get(name)) return;
    this.#sql.exec(LAZY_TABLES[name]);
    this.#exists.set(name, true);
  }

  /** Takes what a read of every table name found (`tables`), so `has` asks SQLite nothing. */
  learn(tables: ReadonlySet<string>): void {
    for (const name of Object.keys(LAZY_TABLES) as LazyTable[])
      this.#exists.set(name, tables.has(name));
  }

  /** Forgets what is known: a rolled-back transaction may have undone a creation. */
  forget(): void {
    this.#exists.clear();
  }
}
