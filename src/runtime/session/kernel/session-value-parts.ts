/**
 * @module A session's extra parts of long values (`value_parts`, see value-parts.ts), with what it
 * knows about them in memory: most sessions never split a value, and every read of the steps,
 * calls and meta values would otherwise run part queries for nothing.
 */
import type { SqlPort } from "../../../ports";
import { readExtraParts, writeExtraParts } from "../../value-parts";
import type { LazyTables } from "./lazy-tables";

/** The extra parts of one session's values, keyed by owner strings (`step:3`, `call:<id>`, `meta:spec`). */
export class SessionValueParts {
  readonly #sql: SqlPort;
  readonly #tables: LazyTables;
  /** Whether `value_parts` has any row (undefined until read). */
  #hasParts: boolean | undefined;

  constructor(sql: SqlPort, tables: LazyTables) {
    this.#sql = sql;
    this.#tables = tables;
  }

  /** Stores the parts after the first (the caller's row holds it); nothing for a one-part value. */
  write(owner: string, parts: readonly string[]): void {
    if (parts.length <= 1) return;
    this.#tables.ensure("value_parts");
    writeExtraParts(this.#sql, owner, parts);
    this.#hasParts = true;
  }

  /** The extra parts under `prefix`, joined per owner; no statement at all while the session has never split a value. */
  read(prefix: string): Map<string, string> {
    return this.#any() ? readExtraParts(this.#sql, prefix) : new Map();
  }

  /** Drops `owner`'s parts before its value is written again (a shorter value has fewer). */
  drop(owner: string): void {
    if (this.#any()) this.#sql.exec(`DELETE FROM value_parts WHERE owner = ?`, owner);
  }

  /** Whether any value of the session was ever split (asked of SQLite once, then kept). */
  #any(): boolean {
    return (this.#hasParts ??=
      this.#tables.has("value_parts") &&
      this.#sql.exec(`SELECT 1 AS found FROM value_parts LIMIT 1`).toArray().length > 0);
  }

  /** Forgets what is known (after a rolled-back transaction). */
  forget(): void {
    this.#hasParts = undefined;
  }
}
