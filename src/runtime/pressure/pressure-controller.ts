/**
 * @module The controller that sizes rollouts in flight from the replicas' KV pressure, run by the
 * policy object (which knows the backend's replicas): its alarm reads every replica's `/metrics`
 * each `period_ms` while a batch is running, applies the rule (pressure-rule.ts), and keeps the
 * budget; batch trackers ask for their share on their own alarm (never per model call), and
 * their asking is what tells the controller which batches share the budget.
 */
import type { SqlPort } from "../../ports";
import type { BackendConfig } from "../../schemas/backend-config";
import {
  DEFAULT_PRESSURE_CONFIG,
  type FieldProblem,
  mergePressure,
  PressureConfig,
  type PressureShare,
  type PressureView,
  ReplicaPressure,
} from "../../schemas/pressure";
import { CREATE_META_TABLE, readMetaText, writeMetaText } from "../meta-table";
import { metricsUrlOf, parsePressure } from "./prometheus-text";
import {
  INITIAL_PRESSURE_STATE,
  nextPressureState,
  type PressureState,
  sharesOf,
} from "./pressure-rule";

/** A batch that has not asked for its share for this long no longer shares the budget (three tracker alarms). */
const BATCH_IDLE_MS = 15_000;

/** What the controller needs from the policy object. */
export interface PressureDeps {
  sql: SqlPort;
  now: () => number;
  /** The backend in force (its replicas are read when `metrics_urls` is null). */
  backend: () => BackendConfig | null;
  /** `GET url` as text within `timeoutMs`, or null (refused, timed out, not 200). */
  fetchText: (url: string, timeoutMs: number) => Promise<string | null>;
  /** The object's alarm. */
  getAlarm: () => Promise<number | null>;
  setAlarm: (at: number) => Promise<void>;
}

const MIGRATIONS = [
  CREATE_META_TABLE,
  `CREATE TABLE IF NOT EXISTS pressure_batches (
     batch_id TEXT PRIMARY KEY, max_concurrent INTEGER NOT NULL, live INTEGER NOT NULL, seen_at INTEGER NOT NULL
   ) WITHOUT ROWID`,
];

interface BatchDemand {
  batch_id: string;
  max_concurrent: number;
  live: number;
  seen_at: number;
  [key: string]: string | number;
}

interface Sampled {
  sampled_at: number | null;
  replicas: ReplicaPressure[];
}

/** The metrics URLs a backend's replicas serve (decode engines for `vllm_pd`: KV pressure lives there). */
function backendMetricsUrls(backend: BackendConfig | null): string[] {
  const servers =
    backend?.name === "vllm"
      ? backend.replicas
      : backend?.name === "vllm_pd"
        ? backend.decode
        : undefined;
  return Array.isArray(servers) ? servers.map((url) => metricsUrlOf(String(url))) : [];
}

/** The controller's storage and steps (the policy object makes each call single-writer). */
export class PressureController {
  readonly #deps: PressureDeps;

  constructor(deps: PressureDeps) {
    this.#deps = deps;
    for (const statement of MIGRATIONS) deps.sql.exec(statement);
  }

  /** The stored config (defaults when never set). */
  config(): PressureConfig {
    const text = readMetaText(this.#deps.sql, "pressure_config");
    return text === undefined ? DEFAULT_PRESSURE_CONFIG : PressureConfig.parse(JSON.parse(text));
  }

  /** Merges `patch` (untrusted: validated here) into the config; a fresh start of the rule when turned on. */
  async configure(
    patch: unknown,
  ): Promise<{ ok: true; view: PressureView } | { ok: false; errors: FieldProblem[] }> {
    const before = this.config();
    const merged = mergePressure(before, patch);
    if (!merged.ok) return merged;
    writeMetaText(this.#deps.sql, "pressure_config", JSON.stringify(merged.config));
    if (merged.config.enabled && !before.enabled) {
      this.#writeState(INITIAL_PRESSURE_STATE);
      await this.#arm(merged.config);
    }
    return { ok: true, view: this.view() };
  }

  /** The config, the rule's state, the last sample and the batches sharing the budget. */
  view(): PressureView {
    const state = this.#state();
    const sampled = this.#sampled();
    const batches = this.#activeBatches();
    const shares = sharesOf(state.limit ?? Number.MAX_SAFE_INTEGER, batches);
    return {
      config: this.config(),
      limit: state.limit,
      decision: state.decision,
      overload_streak: state.overload_streak,
      requeue_epoch: state.requeue_epoch,
      sampled_at: sampled.sampled_at,
      replicas: sampled.replicas,
      batches: batches.map(({ batch_id, max_concurrent, live }) => ({
        batch_id,
        max_concurrent,
        live,
        share: shares.get(batch_id)!,
      })),
    };
  }

  /**
   * A tracker's periodic ask: records what the batch wants (`maxConcurrent`) and holds (`live`),
   * and answers its share of the budget. Off: its own `max_concurrent`.
   */
  async share(batchId: string, maxConcurrent: number, live: number): Promise<PressureShare> {
    const config = this.config();
    const now = this.#deps.now();
    this.#deps.sql.exec(
      `INSERT INTO pressure_batches (batch_id, max_concurrent, live, seen_at) VALUES (?, ?, ?, ?)
       ON CONFLICT(batch_id) DO UPDATE SET max_concurrent = excluded.max_concurrent, live = excluded.live, seen_at = excluded.seen_at`,
      batchId,
      Math.max(1, Math.floor(maxConcurrent)),
      Math.max(0, Math.floor(live)),
      now,
    );
    const state = this.#state();
    if (!config.enabled || state.limit === null) {
      if (config.enabled) await this.#arm(config);
      return { enabled: config.enabled, share: maxConcurrent, requeue_epoch: state.requeue_epoch };
    }
    await this.#arm(config);
    const share = sharesOf(state.limit, this.#activeBatches()).get(batchId) ?? maxConcurrent;
    return { enabled: true, share, requeue_epoch: state.requeue_epoch };
  }

  /** The alarm: one sample of every replica and one step of the rule; re-armed while batches share the budget. */
  async onAlarm(): Promise<void> {
    const config = this.config();
    if (!config.enabled) return;
    this.#deps.sql.exec(
      `DELETE FROM pressure_batches WHERE seen_at < ?`,
      this.#deps.now() - 4 * BATCH_IDLE_MS,
    );
    const batches = this.#activeBatches();
    if (batches.length === 0) return; // the next tracker that asks arms it again
    const urls = config.metrics_urls ?? backendMetricsUrls(this.#deps.backend());
    const timeout = Math.max(200, Math.floor(config.period_ms / 2));
    const answers = await Promise.all(
      urls.map(async (url) => {
        const text = await this.#deps.fetchText(url, timeout);
        return text === null ? null : parsePressure(url, text);
      }),
    );
    const replicas = answers.filter((r): r is ReplicaPressure => r !== null);
    const ceiling = Math.min(
      config.max_concurrency ?? Number.MAX_SAFE_INTEGER,
      batches.reduce((sum, b) => sum + b.max_concurrent, 0),
    );
    const inFlight = batches.reduce((sum, b) => sum + b.live, 0);
    const next = nextPressureState(this.#state(), config, { replicas, inFlight, ceiling });
    this.#writeState(next);
    const now = this.#deps.now();
    writeMetaText(this.#deps.sql, "pressure_sample", JSON.stringify({ sampled_at: now, replicas }));
    await this.#deps.setAlarm(now + config.period_ms);
  }

  async #arm(config: PressureConfig): Promise<void> {
    if ((await this.#deps.getAlarm()) === null)
      await this.#deps.setAlarm(this.#deps.now() + config.period_ms);
  }

  #activeBatches(): BatchDemand[] {
    return this.#deps.sql
      .exec<BatchDemand>(
        `SELECT * FROM pressure_batches WHERE seen_at >= ? ORDER BY batch_id`,
        this.#deps.now() - BATCH_IDLE_MS,
      )
      .toArray();
  }

  #state(): PressureState {
    const text = readMetaText(this.#deps.sql, "pressure_state");
    return text === undefined ? INITIAL_PRESSURE_STATE : (JSON.parse(text) as PressureState);
  }

  #writeState(state: PressureState): void {
    writeMetaText(this.#deps.sql, "pressure_state", JSON.stringify(state));
  }

  #sampled(): Sampled {
    const text = readMetaText(this.#deps.sql, "pressure_sample");
    return text === undefined ? { sampled_at: null, replicas: [] } : (JSON.parse(text) as Sampled);
  }
}
