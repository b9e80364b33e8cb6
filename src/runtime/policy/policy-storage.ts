/**
 * @module SQLite tables of the policy object: meta (state), in_flight, resources. Named
 * PolicyStorage because PolicyStore is the Durable Object class that owns it.
 */
import type { JsonValue } from "../../schemas/json";
import type { SqlPort } from "../../ports";
import { resourceId, type ResourceVersion } from "./policy-api";
import type { ResourceRecord } from "./policy-results";
import { initialPolicyState, PolicyState } from "./policy-state";
import { CREATE_META_TABLE, readMetaText, writeMetaText } from "../meta-table";

const MIGRATIONS = [
  CREATE_META_TABLE,
  `CREATE TABLE IF NOT EXISTS in_flight (
     call_id TEXT PRIMARY KEY,
     expires_at INTEGER NOT NULL,
     acquired_version INTEGER NOT NULL
   )`,
  // Counting and purging go by expiry, so neither scans the whole table.
  `CREATE INDEX IF NOT EXISTS in_flight_expires_at ON in_flight (expires_at)`,
  `CREATE TABLE IF NOT EXISTS resources (
     name TEXT NOT NULL,
     version INTEGER NOT NULL,
     value TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     PRIMARY KEY (name, version)
   )`,
];

/**
 * Typed reads and validated writes over the policy object's tables. The state is parsed with its
 * persisted schema on every write, so a bad value is refused before it reaches storage.
 */
export class PolicyStorage {
  readonly #sql: SqlPort;

  constructor(sql: SqlPort) {
    this.#sql = sql;
  }

  /** Creates the tables if they do not exist (idempotent). */
  migrate(): void {
    for (const statement of MIGRATIONS) this.#sql.exec(statement);
  }

  /** The stored state, or the initial one (not written) before the first change. */
  readState(now: number): PolicyState {
    const text = readMetaText(this.#sql, "state");
    return text !== undefined ? PolicyState.parse(JSON.parse(text)) : initialPolicyState(now);
  }

  /** Validates and stores the state. */
  writeState(state: PolicyState): void {
    const value = JSON.stringify(PolicyState.parse(state));
    writeMetaText(this.#sql, "state", value);
  }

  /** Whether `callId` is registered and not expired at `now` (a lookup by key). */
  isLive(callId: string, now: number): boolean {
    return this.#sql.exec(`SELECT 1 AS found FROM in_flight WHERE call_id = ? AND expires_at > ?`, callId, now).toArray().length > 0;
  }

  /** Registers an in-flight call; a call id seen before keeps its first version and the later expiry. */
  upsertCall(callId: string, expiresAt: number, version: number): void {
    this.#sql.exec(
      `INSERT INTO in_flight (call_id, expires_at, acquired_version) VALUES (?, ?, ?)
       ON CONFLICT(call_id) DO UPDATE SET expires_at = MAX(expires_at, excluded.expires_at)`,
      callId,
      expiresAt,
      version,
    );
  }

  /** Forgets an in-flight call (no-op for an unknown id). */
  deleteCall(callId: string): void {
    this.#sql.exec(`DELETE FROM in_flight WHERE call_id = ?`, callId);
  }

  /** Drops calls whose ttl passed without a release (their invocation died or forgot). */
  purgeExpired(now: number): void {
    this.#sql.exec(`DELETE FROM in_flight WHERE expires_at <= ?`, now);
  }

  /** Calls registered and not expired at `now`. */
  countLive(now: number): number {
    return this.#sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM in_flight WHERE expires_at > ?`, now).toArray()[0]?.n ?? 0;
  }

  /** The newest version of `name`, 0 when there is none. */
  latestVersion(name: string): number {
    return this.#sql.exec<{ v: number | null }>(`SELECT MAX(version) AS v FROM resources WHERE name = ?`, name).toArray()[0]?.v ?? 0;
  }

  /** Stores one resource version; the primary key refuses to overwrite an existing one. */
  insertResource(name: string, version: number, valueJson: string, createdAt: number): void {
    this.#sql.exec(`INSERT INTO resources (name, version, value, created_at) VALUES (?, ?, ?, ?)`, name, version, valueJson, createdAt);
  }

  /** One resource version, or undefined. */
  readResource(name: string, version: number): ResourceRecord | undefined {
    const row = this.#sql
      .exec<{ value: string; created_at: number }>(`SELECT value, created_at FROM resources WHERE name = ? AND version = ?`, name, version)
      .toArray()[0];
    return row ? { name, version, id: resourceId(name, version), value: JSON.parse(row.value) as JsonValue, created_at: row.created_at } : undefined;
  }

  /** Every resource name with its latest version, by name. */
  listResources(): ResourceVersion[] {
    return this.#sql.exec<{ name: string; version: number }>(`SELECT name, MAX(version) AS version FROM resources GROUP BY name ORDER BY name`).toArray();
  }
}
