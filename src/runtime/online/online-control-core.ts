/**
 * @module The deployment's online control (one object): the applications with their hashed keys
 * and settings, and the serving configuration (versions mapped to replica pools, and the traffic
 * split). Written by admin routes; read on the per-call path only through each isolate's
 * short-lived cache (functions/online-auth.ts, functions/online-serving.ts), never per call.
 */
import type { SqlPort, SqlValue } from "../../ports";
import {
  guardActions,
  hashAppKey,
  keyPrefix,
  newAppId,
  newAppKey,
  splitProblems,
  versionRewards,
  type GuardAction,
  type VersionReward,
} from "../../online";
import {
  AppSettings,
  GuardConfig,
  ServingConfig,
  type VersionOutcomes,
  type AppView,
  type CreateAppRequest,
  type ServingConfigRequest,
  type SplitWeights,
} from "../../schemas/online";

const MIGRATIONS = [
  `CREATE TABLE IF NOT EXISTS apps (
     app_id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     key_hash TEXT NOT NULL,
     key_prefix TEXT NOT NULL,
     created_at INTEGER NOT NULL,
     revoked_at INTEGER,
     settings TEXT NOT NULL
   )`,
  `CREATE TABLE IF NOT EXISTS serving (id INTEGER PRIMARY KEY CHECK (id = 1), value TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS outcomes (version TEXT PRIMARY KEY, sessions INTEGER NOT NULL, sum REAL NOT NULL, sum_squares REAL NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS guard (id INTEGER PRIMARY KEY CHECK (id = 1), value TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS guard_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, value TEXT NOT NULL)`,
];

/** Guard actions kept in the log (the oldest are dropped past it). */
const GUARD_LOG_KEEP = 1_000;

/** What the per-call path needs of an application: its key's hash, whether it is revoked, its settings. */
export interface AppKeyRecord {
  app_id: string;
  key_hash: string;
  revoked: boolean;
  settings: AppSettings;
}

/** The guard as the admin reads it: its config, each version's reward, and its actions, newest first. */
export interface GuardView {
  config: GuardConfig;
  rewards: VersionReward[];
  log: Array<GuardAction & { at: number }>;
}

/** A change to the serving configuration: made, or refused with the fields at fault (422). */
export type ServingChange =
  | { ok: true; serving: ServingConfig }
  | { ok: false; errors: Array<{ path: string; message: string }> };

interface AppRow extends Record<string, SqlValue> {
  app_id: string;
  name: string;
  key_hash: string;
  key_prefix: string;
  created_at: number;
  revoked_at: number | null;
  settings: string;
}

function viewOf(row: AppRow): AppView {
  return {
    app_id: row.app_id,
    name: row.name,
    key_prefix: row.key_prefix,
    created_at: row.created_at,
    revoked_at: row.revoked_at,
    settings: AppSettings.parse(JSON.parse(row.settings)),
  };
}

/** Applications and the serving configuration, in SQLite. */
export class OnlineControlCore {
  readonly #sql: SqlPort;
  readonly #now: () => number;

  constructor(sql: SqlPort, now: () => number = Date.now) {
    this.#sql = sql;
    this.#now = now;
    for (const statement of MIGRATIONS) this.#sql.exec(statement);
  }

  /** A new application and its key, which is answered here once and stored only as its hash. */
  async createApp(input: CreateAppRequest): Promise<{ app: AppView; api_key: string }> {
    const appId = newAppId();
    const key = newAppKey(appId);
    const row: AppRow = {
      app_id: appId,
      name: input.name,
      key_hash: await hashAppKey(key),
      key_prefix: keyPrefix(key),
      created_at: this.#now(),
      revoked_at: null,
      settings: JSON.stringify(input.settings),
    };
    this.#sql.exec(
      `INSERT INTO apps (app_id, name, key_hash, key_prefix, created_at, revoked_at, settings) VALUES (?, ?, ?, ?, ?, NULL, ?)`,
      row.app_id,
      row.name,
      row.key_hash,
      row.key_prefix,
      row.created_at,
      row.settings,
    );
    return { app: viewOf(row), api_key: key };
  }

  /** Every application, oldest first (keys never: only their prefixes). */
  listApps(): AppView[] {
    return this.#sql
      .exec<AppRow>(`SELECT * FROM apps ORDER BY created_at, app_id`)
      .toArray()
      .map(viewOf);
  }

  /** Revokes an application's key (idempotent); null when there is no such application. */
  revokeApp(appId: string): AppView | null {
    this.#sql.exec(
      `UPDATE apps SET revoked_at = ? WHERE app_id = ? AND revoked_at IS NULL`,
      this.#now(),
      appId,
    );
    const row = this.#sql.exec<AppRow>(`SELECT * FROM apps WHERE app_id = ?`, appId).toArray()[0];
    return row ? viewOf(row) : null;
  }

  /** What the key check needs of `appId`; null when there is no such application. */
  keyRecord(appId: string): AppKeyRecord | null {
    const row = this.#sql.exec<AppRow>(`SELECT * FROM apps WHERE app_id = ?`, appId).toArray()[0];
    if (!row) return null;
    const view = viewOf(row);
    return {
      app_id: row.app_id,
      key_hash: row.key_hash,
      revoked: row.revoked_at !== null,
      settings: view.settings,
    };
  }

  /** The serving configuration in force (no versions, no weights until one is set). */
  serving(): ServingConfig {
    const row = this.#sql
      .exec<{ value: string }>(`SELECT value FROM serving WHERE id = 1`)
      .toArray()[0];
    return row
      ? ServingConfig.parse(JSON.parse(row.value))
      : { versions: {}, weights: {}, generation: 0 };
  }

  /**
   * Sets the versions served (and the split, when given; else the old weights of versions still
   * served). Refused when the split would name a version not served or sum to no positive total.
   */
  setServing(input: ServingConfigRequest): ServingChange {
    const current = this.serving();
    const versions = Object.keys(input.versions).sort((a, b) => Number(a) - Number(b));
    const kept = Object.fromEntries(
      Object.entries(current.weights).filter(([version]) => versions.includes(version)),
    );
    // Without a split given: the old weights of versions still served, else all on the lowest version.
    const weights =
      input.weights ??
      (Object.values(kept).some((w) => w > 0) || versions.length === 0
        ? kept
        : { [versions[0]!]: 1 });
    const problems = splitProblems(weights, versions);
    if (problems.length > 0) return { ok: false, errors: problems };
    return this.#write({ versions: input.versions, weights }, current);
  }

  /** Sets the split (the versions must be served, the weights sum to a positive total). */
  setSplit(weights: SplitWeights): ServingChange {
    const current = this.serving();
    const problems = splitProblems(weights, Object.keys(current.versions));
    if (problems.length > 0) return { ok: false, errors: problems };
    return this.#write({ versions: current.versions, weights }, current);
  }

  /**
   * Counts scored sessions' rewards by the version that served them, then applies the split guard
   * (when enabled): each candidate it takes out is written to the split and logged. Answers the
   * actions taken.
   */
  reportOutcomes(outcomes: Array<{ version: number; reward: number }>): GuardAction[] {
    for (const { version, reward } of outcomes) {
      if (!Number.isFinite(reward)) continue;
      this.#sql.exec(
        `INSERT INTO outcomes (version, sessions, sum, sum_squares) VALUES (?, 1, ?, ?)
         ON CONFLICT (version) DO UPDATE SET sessions = sessions + 1, sum = sum + excluded.sum, sum_squares = sum_squares + excluded.sum_squares`,
        String(version),
        reward,
        reward * reward,
      );
    }
    const current = this.serving();
    const actions = guardActions(this.guardConfig(), current.weights, this.#outcomes());
    if (actions.length === 0) return [];
    this.#write({ versions: current.versions, weights: actions.at(-1)!.weights_after }, current);
    const at = this.#now();
    for (const action of actions) {
      // Every action is logged: in the object's log (GET /v1/online/guard) and the Worker's.
      console.warn("online split guard: candidate taken out of the split", action);
      this.#sql.exec(`INSERT INTO guard_log (at, value) VALUES (?, ?)`, at, JSON.stringify(action));
    }
    this.#sql.exec(
      `DELETE FROM guard_log WHERE seq <= (SELECT MAX(seq) FROM guard_log) - ?`,
      GUARD_LOG_KEEP,
    );
    return actions;
  }

  /** The guard's config (off by default). */
  guardConfig(): GuardConfig {
    const row = this.#sql
      .exec<{ value: string }>(`SELECT value FROM guard WHERE id = 1`)
      .toArray()[0];
    return GuardConfig.parse(row ? JSON.parse(row.value) : {});
  }

  /**
   * Sets the guard's config (validated by the route) and restarts its counts: a configuration
   * judges the sessions scored after it was set.
   */
  setGuard(config: GuardConfig): GuardView {
    this.#sql.exec(
      `INSERT OR REPLACE INTO guard (id, value) VALUES (1, ?)`,
      JSON.stringify(config),
    );
    this.#sql.exec(`DELETE FROM outcomes`);
    return this.guard();
  }

  /** The guard's config, each version's reward with its confidence interval, and its log. */
  guard(): GuardView {
    const config = this.guardConfig();
    const log = this.#sql
      .exec<{ at: number; value: string }>(
        `SELECT at, value FROM guard_log ORDER BY seq DESC LIMIT 100`,
      )
      .toArray()
      .map((row) => ({ ...(JSON.parse(row.value) as GuardAction), at: row.at }));
    return { config, rewards: versionRewards(this.#outcomes(), config.z), log };
  }

  #outcomes(): Record<string, VersionOutcomes> {
    return Object.fromEntries(
      this.#sql
        .exec<{ version: string; sessions: number; sum: number; sum_squares: number }>(
          `SELECT version, sessions, sum, sum_squares FROM outcomes`,
        )
        .toArray()
        .map(({ version, ...o }) => [version, o]),
    );
  }

  #write(next: Omit<ServingConfig, "generation">, current: ServingConfig): ServingChange {
    const serving: ServingConfig = { ...next, generation: current.generation + 1 };
    this.#sql.exec(
      `INSERT OR REPLACE INTO serving (id, value) VALUES (1, ?)`,
      JSON.stringify(serving),
    );
    return { ok: true, serving };
  }
}
