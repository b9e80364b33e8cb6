/**
 * @module SQLite tables of the policy object: meta (state), resources (in-flight calls live in the admission shards). Named
 * PolicyStorage because PolicyStore is the Durable Object class that owns it.
 */
import type { JsonValue } from "../../schemas/json";
import type { SqlPort } from "../../ports";
import type { ResourceVersion } from "../../schemas/policy";
import { resourceId } from "./policy-api";
import type { ResourceRecord } from "./policy-results";
import { initialPolicyState, PolicyState } from "./policy-state";
import { CREATE_META_TABLE, readMetaText, writeMetaText } from "../meta-table";

const MIGRATIONS = [
  CREATE_META_TABLE,
  `CREATE TABLE IF NOT EXISTS resources (
     name TEXT NOT NULL,
     version INTEGER NOT NULL,
     value TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     PRIMARY KEY (name, version)
   )`,
  // One row per weight sync that ended, by the version it made live (the run view's sync waits).
  `CREATE TABLE IF NOT EXISTS syncs (policy_version INTEGER PRIMARY KEY, previous_version INTEGER NOT NULL, began_at INTEGER NOT NULL, ended_at INTEGER NOT NULL)`,
];

/** Ended syncs kept (older ones are pruned as new ones end): a run of 10,000 steps, a few hundred KB. */
export const SYNCS_KEPT = 10_000;

/** One weight sync that ended: new model calls were refused from `began_at` to `ended_at`. */
export interface SyncRecord {
  policy_version: number;
  previous_version: number;
  began_at: number;
  ended_at: number;
}

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

  /** Records an ended sync (once per version) and prunes the oldest beyond SYNCS_KEPT. */
  insertSync(sync: SyncRecord): void {
    this.#sql.exec(
      `INSERT OR IGNORE INTO syncs (policy_version, previous_version, began_at, ended_at) VALUES (?, ?, ?, ?)`,
      sync.policy_version,
      sync.previous_version,
      sync.began_at,
      sync.ended_at,
    );
    this.#sql.exec(
      `DELETE FROM syncs WHERE policy_version NOT IN (SELECT policy_version FROM syncs ORDER BY policy_version DESC LIMIT ?)`,
      SYNCS_KEPT,
    );
  }

  /** Ended syncs that began in `[from, to)`, oldest first (at most `limit`). */
  listSyncs(from: number, to: number, limit: number): SyncRecord[] {
    return this.#sql
      .exec<SyncRecord & Record<string, number>>(
        `SELECT policy_version, previous_version, began_at, ended_at FROM syncs WHERE began_at >= ? AND began_at < ? ORDER BY began_at LIMIT ?`,
        from,
        to,
        limit,
      )
      .toArray()
      .map((row) => ({
        policy_version: row.policy_version,
        previous_version: row.previous_version,
        began_at: row.began_at,
        ended_at: row.ended_at,
      }));
  }

  /** The newest version of `name`, 0 when there is none. */
  latestVersion(name: string): number {
    return (
      this.#sql
        .exec<{ v: number | null }>(`SELECT MAX(version) AS v FROM resources WHERE name = ?`, name)
        .toArray()[0]?.v ?? 0
    );
  }

  /** Stores one resource version; the primary key refuses to overwrite an existing one. */
  insertResource(name: string, version: number, valueJson: string, createdAt: number): void {
    this.#sql.exec(
      `INSERT INTO resources (name, version, value, created_at) VALUES (?, ?, ?, ?)`,
      name,
      version,
      valueJson,
      createdAt,
    );
  }

  /** One resource version, or undefined. */
  readResource(name: string, version: number): ResourceRecord | undefined {
    const row = this.#sql
      .exec<{ value: string; created_at: number }>(
        `SELECT value, created_at FROM resources WHERE name = ? AND version = ?`,
        name,
        version,
      )
      .toArray()[0];
    return row
      ? {
          name,
          version,
          id: resourceId(name, version),
          value: JSON.parse(row.value) as JsonValue,
          created_at: row.created_at,
        }
      : undefined;
  }

  /** Every resource name with its latest version, by name. */
  listResources(): ResourceVersion[] {
    return this.#sql
      .exec<{ name: string; version: number }>(
        `SELECT name, MAX(version) AS version FROM resources GROUP BY name ORDER BY name`,
      )
      .toArray();
  }
}
