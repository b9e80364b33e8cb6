/**
 * @module The tables every rollout session has (`meta`, `steps`, `llm_calls`; the rarely used
 * ones are in lazy-tables.ts), and how an object created with an earlier layout is brought up to
 * date. Every table and index created is rows written (billed) in each session, and so is every
 * index entry a write adds: the layouts below keep both to what a session needs.
 */
import type { SqlPort } from "../../../ports";
import { CREATE_META_TABLE } from "../../meta-table";

const CREATE_TABLES: Array<[name: string, statement: string]> = [
  ["meta", CREATE_META_TABLE],
  [
    "steps",
    // No index on step_id: the one writer checks it before inserting (commitStep looks a step id up
    // only for a retried or unusual commit, a scan of at most max_steps rows), and an index entry
    // per step was a billed row written on every commit. `state` is the session state as the
    // step's commit left it (see `insertStep`); tables created before get the column on start.
    `CREATE TABLE IF NOT EXISTS steps (
     step_index INTEGER PRIMARY KEY,
     step_id TEXT NOT NULL,
     body TEXT NOT NULL,
     env_snapshot TEXT,
     state TEXT
   )`,
  ],
  // No AUTOINCREMENT: calls are never deleted, so `seq` grows all the same, and AUTOINCREMENT
  // wrote a `sqlite_sequence` row on every call. No index on call_id either: the one writer
  // keeps the ids it has stored in memory (SessionStore.insertCall), and the index entry was a
  // second billed row written on every call. Objects created before keep their table (with
  // AUTOINCREMENT and a UNIQUE index), which the same statements serve.
  [
    "llm_calls",
    `CREATE TABLE IF NOT EXISTS llm_calls (
     seq INTEGER PRIMARY KEY,
     call_id TEXT NOT NULL,
     step_id TEXT,
     body TEXT NOT NULL
   )`,
  ],
];

/** What `migrateSessionTables` found and left. */
export interface SessionTables {
  /** Every table the storage holds now. */
  tables: Set<string>;
  /** Whether none of the session's tables existed before: a new session, whose tables are all empty. */
  fresh: boolean;
}

/**
 * Creates the tables that do not exist and returns the names of every table the storage holds
 * now (the lazy ones included, so they need no lookup of their own). A `steps` table created
 * before the `state` column gets it (`insertStep` stores the state there); other earlier layouts
 * (an id index, AUTOINCREMENT) are served as they are by the same statements. One read of
 * `sqlite_master` decides it all: a new session (every rollout starts one) runs its three
 * `CREATE`s and nothing else, an existing one a single `PRAGMA`.
 */
export function migrateSessionTables(sql: SqlPort): SessionTables {
  const tables = new Set(
    sql
      .exec<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table'`)
      .toArray()
      .map((row) => row.name),
  );
  const stepsExisted = tables.has("steps");
  const fresh = CREATE_TABLES.every(([name]) => !tables.has(name));
  for (const [name, statement] of CREATE_TABLES) {
    if (tables.has(name)) continue;
    sql.exec(statement);
    tables.add(name);
  }
  if (stepsExisted) {
    const columns = sql.exec<{ name: string }>(`PRAGMA table_info(steps)`).toArray();
    if (!columns.some((column) => column.name === "state"))
      sql.exec(`ALTER TABLE steps ADD COLUMN state TEXT`);
  }
  return { tables, fresh };
}
