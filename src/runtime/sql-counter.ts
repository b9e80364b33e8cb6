/**
 * @module The SQLite work a Durable Object did, from the cursors' own `rowsRead` / `rowsWritten`:
 * the units Cloudflare bills a SQLite-backed object's storage by (an index entry written counts
 * as a row written). Benchmarks read them to price a step from measured counts, not estimates.
 */
import type { SqlPort, SqlValue } from "../ports";

/** Statements run and rows read and written since the object started (in memory). */
export interface SqlCounts {
  statements: number;
  rows_read: number;
  rows_written: number;
}

/** The part of workerd's `SqlStorage` this wraps: a cursor that reports its rows once consumed. */
interface CountedCursor<T> {
  toArray(): T[];
  readonly rowsRead: number;
  readonly rowsWritten: number;
}
interface CountableSql {
  exec<T extends Record<string, SqlValue>>(
    query: string,
    ...bindings: SqlValue[]
  ): CountedCursor<T>;
}

/**
 * A `SqlPort` over an object's `ctx.storage.sql` that adds up what every statement read and wrote.
 * A cursor's counts grow as it is consumed, so they are taken once when the statement runs (a write
 * without RETURNING is done by then) and topped up when its rows are read.
 */
export class CountingSql implements SqlPort {
  readonly #sql: CountableSql;
  #statements = 0;
  #rowsRead = 0;
  #rowsWritten = 0;

  constructor(sql: CountableSql) {
    this.#sql = sql;
  }

  /** Runs one statement, as `SqlStorage.exec` does. */
  exec<T extends Record<string, SqlValue>>(
    query: string,
    ...bindings: SqlValue[]
  ): { toArray(): T[] } {
    const cursor = this.#sql.exec<T>(query, ...bindings);
    this.#statements++;
    let read = cursor.rowsRead;
    let written = cursor.rowsWritten;
    this.#rowsRead += read;
    this.#rowsWritten += written;
    return {
      toArray: () => {
        const rows = cursor.toArray();
        this.#rowsRead += cursor.rowsRead - read;
        this.#rowsWritten += cursor.rowsWritten - written;
        read = cursor.rowsRead;
        written = cursor.rowsWritten;
        return rows;
      },
    };
  }

  /** The storage behind `sql`, whether or not it counts: the key for anything kept per storage. */
  static storageOf(sql: SqlPort): object {
    return sql instanceof CountingSql ? sql.#sql : sql;
  }

  /** The counts so far. */
  read(): SqlCounts {
    return {
      statements: this.#statements,
      rows_read: this.#rowsRead,
      rows_written: this.#rowsWritten,
    };
  }
}
