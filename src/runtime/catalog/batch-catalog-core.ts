/**
 * @module The catalog of batches: one row per batch, newest first, so people (the dashboard,
 * `GET /v1/batches`) can find batches without knowing their ids. Progress stays in each batch's
 * own tracker; the catalog only says which batches exist.
 */
import type { SqlPort } from "../../ports";
import { BatchCatalogEntry, BatchListQuery } from "../../schemas/batch-listing";

const MIGRATIONS = [
  `CREATE TABLE IF NOT EXISTS batches (
     batch_id TEXT PRIMARY KEY,
     agent TEXT NOT NULL,
     mode TEXT NOT NULL,
     training_mode TEXT NOT NULL,
     series TEXT NOT NULL,
     rollouts INTEGER NOT NULL,
     created_at INTEGER NOT NULL
   )`,
  `CREATE INDEX IF NOT EXISTS batches_created ON batches (created_at DESC)`,
  `CREATE INDEX IF NOT EXISTS batches_series ON batches (series, created_at DESC)`,
];

/** Registration result: whether the batch was new to the catalog, or why the entry was refused. */
export type RegisterResult =
  { ok: true; added: boolean } | { ok: false; errors: Array<{ path: string; message: string }> };

/** Reads and writes the catalog table. */
export class BatchCatalogCore {
  readonly #sql: SqlPort;

  constructor(sql: SqlPort) {
    this.#sql = sql;
    for (const statement of MIGRATIONS) this.#sql.exec(statement);
  }

  /** Adds a batch (validated here: RPC callers are not trusted); the same batch again changes nothing. */
  register(input: unknown): RegisterResult {
    const parsed = BatchCatalogEntry.safeParse(input);
    if (!parsed.success)
      return {
        ok: false,
        errors: parsed.error.issues.map((issue) => ({
          path: issue.path.map(String).join("."),
          message: issue.message,
        })),
      };
    const e = parsed.data;
    const added =
      this.#sql
        .exec(
          `INSERT OR IGNORE INTO batches (batch_id, agent, mode, training_mode, series, rollouts, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING batch_id`,
          e.batch_id,
          e.agent,
          e.mode,
          e.training_mode,
          e.series,
          e.rollouts,
          e.created_at,
        )
        .toArray().length > 0;
    return { ok: true, added };
  }

  /** One batch's entry (its series as submitted), or null when it is not listed. */
  get(batchId: string): BatchCatalogEntry | null {
    const row = this.#sql
      .exec<BatchCatalogEntry & Record<string, string | number>>(
        `SELECT batch_id, agent, mode, training_mode, series, rollouts, created_at FROM batches WHERE batch_id = ?`,
        String(batchId),
      )
      .toArray()[0];
    return row ? BatchCatalogEntry.parse(row) : null;
  }

  /** Batches newest first, optionally of one series or mode, created before `before`. */
  list(input: unknown): BatchCatalogEntry[] {
    const query = BatchListQuery.parse(input ?? {});
    const clauses: string[] = [];
    const bindings: Array<string | number> = [];
    if (query.series !== undefined) (clauses.push("series = ?"), bindings.push(query.series));
    if (query.mode !== undefined) (clauses.push("mode = ?"), bindings.push(query.mode));
    if (query.before !== undefined) (clauses.push("created_at < ?"), bindings.push(query.before));
    const where = clauses.length > 0 ? `WHERE ${clauses.join(" AND ")}` : "";
    return this.#sql
      .exec<BatchCatalogEntry & Record<string, string | number>>(
        `SELECT batch_id, agent, mode, training_mode, series, rollouts, created_at FROM batches ${where} ORDER BY created_at DESC, batch_id LIMIT ?`,
        ...bindings,
        query.limit,
      )
      .toArray()
      .map((row) => BatchCatalogEntry.parse(row));
  }
}
