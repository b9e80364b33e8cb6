/**
 * @module The gateway calls a session is running, kept in its SQLite so that they survive the
 * object's restart (a deploy or runtime update restarts every Durable Object; a crash does too).
 * A flight is written when its call begins (the request, to run it again) and, for a streamed call
 * that can resume from token ids, a batch of received chunks at each cadence step
 * (src/gateway/stream-progress.ts); it is deleted in the transaction that records the call. What
 * a restarted object finds here is what was cut: call-resume.ts continues it.
 */
import type { VersionRun } from "../../../gateway/interruptible";
import type { UpstreamPath } from "../../../gateway/model-backend";
import type { ProgressBatch } from "../../../gateway/stream-progress";
import type { SqlPort } from "../../../ports";
import type { JsonObject } from "../../../schemas/json";
import { splitText } from "../../value-parts";
import type { GatewayCallMeta } from "./gateway-call";

const CREATE_TABLES = [
  `CREATE TABLE IF NOT EXISTS call_flights (
    call_id TEXT PRIMARY KEY,
    started_at INTEGER NOT NULL,
    kept_tokens INTEGER NOT NULL DEFAULT 0,
    runs TEXT,
    interrupted INTEGER NOT NULL DEFAULT 0,
    restarts INTEGER NOT NULL DEFAULT 0,
    batches INTEGER NOT NULL DEFAULT 0
  )`,
  // kind 'request': the request's JSON in parts of at most ~900 KB (a row is capped at ~2 MB);
  // kind 'chunks': one cadence batch of chat chunks each, appended in order.
  `CREATE TABLE IF NOT EXISTS call_flight_parts (
    call_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    seq INTEGER NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (call_id, kind, seq)
  )`,
];

/** What a flight's call was asked: enough to run it again. */
export interface FlightRequest {
  path: UpstreamPath;
  body: JsonObject & { stream?: boolean };
  meta: GatewayCallMeta;
}

/** A flight as a restarted object reads it back. */
export interface KeptFlight {
  callId: string;
  startedAt: number;
  request: FlightRequest;
  /** The chunks kept, in order (empty when none was, or the call cannot resume from ids). */
  payloads: string[];
  keptTokens: number;
  runs: VersionRun[] | null;
  interrupted: number;
  /** Restarts before this one. */
  restarts: number;
}

/** One session's flights. The object is its storage's only writer, so whether the tables exist is learned once. */
export class CallFlights {
  readonly #sql: SqlPort;
  #tables: boolean | undefined;

  constructor(sql: SqlPort) {
    this.#sql = sql;
  }

  /** Whether any flight is stored (no statement but one `sqlite_master` look per object life when none ever was). */
  any(): boolean {
    if (!this.#exist()) return false;
    return this.#sql.exec(`SELECT 1 AS found FROM call_flights LIMIT 1`).toArray().length > 0;
  }

  /** Stores a call as it begins (a call already stored, resumed after a restart, keeps its row). */
  begin(callId: string, request: FlightRequest, now: number): void {
    this.#ensure();
    const inserted = this.#sql
      .exec<{ call_id: string }>(
        `INSERT OR IGNORE INTO call_flights (call_id, started_at) VALUES (?, ?) RETURNING call_id`,
        callId,
        now,
      )
      .toArray();
    if (inserted.length === 0) return;
    splitText(JSON.stringify(request)).forEach((text, seq) =>
      this.#sql.exec(
        `INSERT INTO call_flight_parts (call_id, kind, seq, text) VALUES (?, 'request', ?, ?)`,
        callId,
        seq,
        text,
      ),
    );
  }

  /**
   * Appends one cadence batch and the call's state after it: two statements per batch of tokens.
   * The chunks go in first, so a failure leaves the count of what is kept no higher than what is.
   */
  keep(callId: string, batch: ProgressBatch): void {
    if (!this.#exist()) return;
    // A flight already ended (recorded) keeps nothing more: the SELECT finds no row.
    this.#sql.exec(
      `INSERT INTO call_flight_parts (call_id, kind, seq, text)
       SELECT call_id, 'chunks', batches, ? FROM call_flights WHERE call_id = ?`,
      JSON.stringify(batch.payloads),
      callId,
    );
    this.#sql.exec(
      `UPDATE call_flights SET kept_tokens = kept_tokens + ?, runs = ?, interrupted = ?, batches = batches + 1
       WHERE call_id = ?`,
      batch.tokens,
      JSON.stringify(batch.runs),
      batch.interrupted,
      callId,
    );
  }

  /** Drops what a call kept (a batch could not be written): a restart then runs it again whole. */
  abandon(callId: string): void {
    if (this.#exist()) this.#dropChunks(callId);
  }

  /** Starts a flight again after a restart: the count of restarts grows; its kept chunks stay unless it runs whole. */
  restarted(callId: string, keepChunks: boolean): void {
    if (!this.#exist()) return;
    this.#sql.exec(`UPDATE call_flights SET restarts = restarts + 1 WHERE call_id = ?`, callId);
    if (!keepChunks) this.#dropChunks(callId);
  }

  #dropChunks(callId: string): void {
    this.#sql.exec(`DELETE FROM call_flight_parts WHERE call_id = ? AND kind = 'chunks'`, callId);
    this.#sql.exec(
      `UPDATE call_flights SET kept_tokens = 0, runs = NULL, interrupted = 0, batches = 0 WHERE call_id = ?`,
      callId,
    );
  }

  /** Drops a flight (its call was recorded, or failed and answered). */
  end(callId: string): void {
    if (!this.#exist()) return;
    this.#sql.exec(`DELETE FROM call_flights WHERE call_id = ?`, callId);
    this.#sql.exec(`DELETE FROM call_flight_parts WHERE call_id = ?`, callId);
  }

  /** Every stored flight whose id is not in `running` (the calls this object life runs itself). */
  cut(running: ReadonlySet<string>): KeptFlight[] {
    if (!this.#exist()) return [];
    const rows = this.#sql
      .exec<{
        call_id: string;
        started_at: number;
        kept_tokens: number;
        runs: string | null;
        interrupted: number;
        restarts: number;
      }>(`SELECT * FROM call_flights ORDER BY started_at`)
      .toArray()
      .filter((row) => !running.has(row.call_id));
    return rows.map((row) => {
      const parts = this.#sql
        .exec<{ kind: string; text: string }>(
          `SELECT kind, text FROM call_flight_parts WHERE call_id = ? ORDER BY kind, seq`,
          row.call_id,
        )
        .toArray();
      const request = parts.filter((part) => part.kind === "request").map((part) => part.text);
      const payloads = parts
        .filter((part) => part.kind === "chunks")
        .flatMap((part) => JSON.parse(part.text) as string[]);
      return {
        callId: row.call_id,
        startedAt: row.started_at,
        request: JSON.parse(request.join("")) as FlightRequest,
        payloads,
        keptTokens: row.kept_tokens,
        runs: row.runs === null ? null : (JSON.parse(row.runs) as VersionRun[]),
        interrupted: row.interrupted,
        restarts: row.restarts,
      };
    });
  }

  #exist(): boolean {
    return (this.#tables ??=
      this.#sql
        .exec(`SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'call_flights'`)
        .toArray().length > 0);
  }

  #ensure(): void {
    if (this.#tables) return;
    for (const statement of CREATE_TABLES) this.#sql.exec(statement);
    this.#tables = true;
  }
}
