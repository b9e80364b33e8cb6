/**
 * @module SQLite tables of one rollout session: meta (spec, state), steps, llm_calls, spans.
 * Steps and calls may be longer than a SQLite value allows (~2 MB): their text is split over
 * `value_parts` (see `value-parts.ts`), and calls are stored against the call before them
 * (`call-codec.ts`), so storage grows with the conversation, not with calls × context.
 */
import type { LlmCall } from "../../schemas/llm-call";
import { RolloutSpec } from "../../schemas/rollout-api";
import type { Step } from "../../schemas/step";
import type { JsonValue } from "../../schemas/json";
import { ChatMessage } from "../../schemas/chat";
import { Span, SpanInput } from "../../schemas/span";
import type { SqlPort } from "../../ports";
import { parseStateChange, SessionState } from "./session-state";
import { CREATE_META_TABLE, readMetaText, writeMetaText } from "../meta-table";
import { CountingSql } from "../sql-counter";
import { readExtraParts, splitText, writeExtraParts } from "../value-parts";
import { LazyTables } from "./lazy-tables";
import { decodeCall, encodeCall, type StoredCall } from "./call-codec";

const MIGRATIONS = [
  CREATE_META_TABLE,
  // No index on step_id: the one writer checks it before inserting (commitStep looks a step id up
  // only for a retried or unusual commit, a scan of at most max_steps rows), and an index entry
  // per step was a billed row written on every commit.
  `CREATE TABLE IF NOT EXISTS steps (
     step_index INTEGER PRIMARY KEY,
     step_id TEXT NOT NULL,
     body TEXT NOT NULL,
     env_snapshot TEXT
   )`,
  // No AUTOINCREMENT: calls are never deleted, so `seq` grows all the same, and AUTOINCREMENT
  // wrote a `sqlite_sequence` row on every call. No index on call_id either: the one writer
  // keeps the ids it has stored in memory (see `#storedCallIds`), and the index entry was a
  // second billed row written on every call. Objects created before keep their table (with
  // AUTOINCREMENT and a UNIQUE index), which the same statements serve.
  `CREATE TABLE IF NOT EXISTS llm_calls (
     seq INTEGER PRIMARY KEY,
     call_id TEXT NOT NULL,
     step_id TEXT,
     body TEXT NOT NULL
   )`,
];

/** Owners of a step's and a call's extra parts in `value_parts`. */
const STEP_PART = "step:";
const ENV_PART = "env:";
const CALL_PART = "call:";

/** A committed step with the env snapshot taken after it (null when the env has none). */
export interface StoredStep {
  step: Step;
  envSnapshot: JsonValue | null;
}

/**
 * Typed reads and validated writes over a session's SQLite tables. Spec and state are parsed
 * with their persisted schema on write; steps and calls arrive already parsed by the core (their
 * `safeParse` decides the RPC's answer), so they are not parsed twice.
 */
export class SessionStore {
  readonly #sql: SqlPort;
  /** The spec as read back from storage (see `readSpec`). */
  #spec: RolloutSpec | undefined;
  /**
   * The state as last read or written, validated. This object is the only writer of its storage,
   * so memory and storage agree except after a rolled-back transaction, which `forgetCached`
   * handles; every RPC reads the state, and the row read was a measured share of a step's CPU.
   */
  #state: SessionState | undefined;
  /**
   * The last call stored, decoded: the base the next call is encoded against. Null when there is
   * none; undefined when not known (a fresh object, or after a rollback): read from the table.
   */
  #lastCall: LlmCall | null | undefined;
  /**
   * Whether `value_parts` has any row (undefined until read). Most sessions never split a value,
   * and every read of the steps and calls would otherwise run three part queries for nothing.
   */
  #hasParts: boolean | undefined;
  /**
   * The ids of the calls stored (undefined until read): a recorded call is idempotent by id, and
   * this object is the table's only writer, so the check needs no index (see MIGRATIONS).
   */
  #callIds: Set<string> | undefined;
  /** `spans` and `value_parts`, created on first write (see lazy-tables.ts). */
  readonly #tables: LazyTables;

  /** One store per storage: see `SessionStore.for`. */
  static readonly #bySql = new WeakMap<object, SessionStore>();

  /**
   * The store of this storage, shared by everything in the object that reads or writes it, so
   * what one part keeps in memory cannot go stale behind another's write.
   */
  static for(sql: SqlPort): SessionStore {
    // Keyed by the storage itself: the object counts its SQL through a wrapper, and a test's
    // direct access to the same storage must reach the same store.
    const storage = CountingSql.storageOf(sql);
    let store = SessionStore.#bySql.get(storage);
    if (!store) SessionStore.#bySql.set(storage, (store = new SessionStore(sql)));
    return store;
  }

  private constructor(sql: SqlPort) {
    this.#sql = sql;
    this.#tables = new LazyTables(sql);
  }

  /** Creates the tables if they do not exist (idempotent). */
  migrate(): void {
    for (const statement of MIGRATIONS) this.#sql.exec(statement);
  }

  #getMeta(key: string): unknown {
    const text = readMetaText(this.#sql, key);
    return text === undefined ? undefined : JSON.parse(text);
  }

  /**
   * Reads and validates a meta row. Spec and state are kept once read (see `readSpec`,
   * `readState`), so this runs once per object, or once after a rollback. The value is shared:
   * callers copy before changing it (they build new objects with spread).
   */
  #readParsed<T>(key: string, parse: (raw: unknown) => T): T | undefined {
    const text = readMetaText(this.#sql, key);
    return text === undefined ? undefined : parse(JSON.parse(text));
  }

  #putMeta(key: string, value: unknown): void {
    writeMetaText(this.#sql, key, JSON.stringify(value));
  }

  /** The rollout's spec, or undefined before `create`. */
  readSpec(): RolloutSpec | undefined {
    // Written once by `create` and never changed, so once read back from storage (committed, not
    // a write a failed transaction may still roll back) it is kept: every RPC reads it, and the
    // row read was a measured share of a step's CPU.
    return (this.#spec ??= this.#readParsed("spec", (raw) => RolloutSpec.parse(raw)));
  }

  writeSpec(spec: RolloutSpec): void {
    this.#putMeta("spec", RolloutSpec.parse(spec));
  }

  readState(): SessionState | undefined {
    return (this.#state ??= this.#readParsed("state", (raw) => SessionState.parse(raw)));
  }

  /**
   * Forgets what is kept in memory (the state, the last call, whether values were split), so the next read goes to
   * storage: called when a transaction rolls back (its writes are undone, memory's are not).
   */
  forgetCached(): void {
    this.#state = undefined;
    this.#lastCall = undefined;
    this.#callIds = undefined;
    this.#hasParts = undefined;
    this.#tables.forget();
  }

  /** Validates and writes the state; fields unchanged since the last valid state read or written are not parsed again. */
  writeState(state: SessionState): void {
    const valid = parseStateChange(state, this.#state);
    writeMetaText(this.#sql, "state", JSON.stringify(valid));
    this.#state = valid;
  }

  #writeParts(owner: string, parts: readonly string[]): void {
    if (parts.length <= 1) return;
    this.#tables.ensure("value_parts");
    writeExtraParts(this.#sql, owner, parts);
    this.#hasParts = true;
  }

  /** The extra parts under `prefix`; no statement at all while the session has never split a value. */
  #readParts(prefix: string): Map<string, string> {
    this.#hasParts ??= this.#tables.has("value_parts") && this.#sql.exec(`SELECT 1 AS found FROM value_parts LIMIT 1`).toArray().length > 0;
    return this.#hasParts ? readExtraParts(this.#sql, prefix) : new Map();
  }

  /** Whether a step with this id is already stored. */
  hasStep(stepId: string): boolean {
    return this.#sql.exec(`SELECT 1 AS found FROM steps WHERE step_id = ?`, stepId).toArray().length > 0;
  }

  /** Stores a step parsed with the Step schema (the caller parsed it); its texts may be any length. */
  insertStep(valid: Step, envSnapshot: JsonValue | null): void {
    const body = splitText(JSON.stringify(valid));
    const env = envSnapshot === null ? null : splitText(JSON.stringify(envSnapshot));
    this.#sql.exec(`INSERT INTO steps (step_index, step_id, body, env_snapshot) VALUES (?, ?, ?, ?)`, valid.step_index, valid.step_id, body[0]!, env === null ? null : env[0]!);
    this.#writeParts(`${STEP_PART}${valid.step_index}`, body);
    if (env) this.#writeParts(`${ENV_PART}${valid.step_index}`, env);
  }

  /**
   * Stores a call parsed with the LlmCall schema (the caller parsed it), encoded against the call
   * stored before it. Returns false, storing nothing, for a call id stored before (a retried
   * record), so the caller counts each call's tokens once.
   */
  insertCall(valid: LlmCall): boolean {
    const ids = this.#storedCallIds();
    if (ids.has(valid.call_id)) return false;
    const parts = splitText(JSON.stringify(encodeCall(valid, this.#previousCall())));
    this.#sql.exec(`INSERT INTO llm_calls (call_id, step_id, body) VALUES (?, ?, ?)`, valid.call_id, valid.step_id, parts[0]!);
    this.#writeParts(`${CALL_PART}${valid.call_id}`, parts);
    ids.add(valid.call_id);
    this.#lastCall = valid;
    return true;
  }

  /** The ids of the calls stored: from memory, or read once (a fresh object, or after a rollback). */
  #storedCallIds(): Set<string> {
    return (this.#callIds ??= new Set(this.#sql.exec<{ call_id: string }>(`SELECT call_id FROM llm_calls`).toArray().map((row) => row.call_id)));
  }

  /**
   * Sets a stored call's `policy_version_end`, which is stored as it is (not against the call
   * before), so the row is changed in place and no later call's encoding depends on it. Refused
   * (nothing written) when no call has this id, or when the version is older than the call's start.
   */
  setCallVersionEnd(callId: string, version: number): "set" | "missing" | "older" {
    const row = this.#sql.exec<{ body: string }>(`SELECT body FROM llm_calls WHERE call_id = ?`, callId).toArray()[0];
    if (!row) return "missing";
    const owner = `${CALL_PART}${callId}`;
    const stored = JSON.parse(row.body + (this.#readParts(owner).get(owner) ?? "")) as StoredCall;
    if (version < stored.policy_version_start) return "older";
    const parts = splitText(JSON.stringify({ ...stored, policy_version_end: version }));
    this.#sql.exec(`UPDATE llm_calls SET body = ? WHERE call_id = ?`, parts[0]!, callId);
    // `#readParts` above has found out whether any value was ever split.
    if (this.#hasParts) this.#sql.exec(`DELETE FROM value_parts WHERE owner = ?`, owner);
    this.#writeParts(owner, parts);
    if (this.#lastCall?.call_id === callId) this.#lastCall = { ...this.#lastCall, policy_version_end: version };
    return "set";
  }

  /** The last stored call, decoded: from memory, or (not known yet) read with every call before it. */
  #previousCall(): LlmCall | null {
    return this.#lastCall === undefined ? (this.listCalls().at(-1) ?? null) : this.#lastCall;
  }

  /** Steps in order, from `afterIndex + 1` on. */
  listSteps(afterIndex = -1): StoredStep[] {
    const rows = this.#sql
      .exec<{ step_index: number; body: string; env_snapshot: string | null }>(`SELECT step_index, body, env_snapshot FROM steps WHERE step_index > ? ORDER BY step_index`, afterIndex)
      .toArray();
    const bodies = this.#readParts(STEP_PART);
    const envs = this.#readParts(ENV_PART);
    return rows.map((row) => ({
      step: JSON.parse(row.body + (bodies.get(`${STEP_PART}${row.step_index}`) ?? "")) as Step,
      envSnapshot: row.env_snapshot === null ? null : (JSON.parse(row.env_snapshot + (envs.get(`${ENV_PART}${row.step_index}`) ?? "")) as JsonValue),
    }));
  }

  /** Appends spans in order and returns them with their sequence ids (1, 2, … per rollout). */
  appendSpans(inputs: SpanInput[], now: number): Span[] {
    if (inputs.length === 0) return [];
    this.#tables.ensure("spans");
    // The object is single-writer, so the next id read here cannot be taken by anyone else.
    let next = this.#sql.exec<{ last: number }>(`SELECT COALESCE(MAX(sequence_id), 0) AS last FROM spans`).toArray()[0]!.last + 1;
    return inputs.map((input) => {
      const span = Span.parse({ ...SpanInput.parse(input), sequence_id: next++, created_at: now });
      this.#sql.exec(`INSERT INTO spans (sequence_id, body) VALUES (?, ?)`, span.sequence_id, JSON.stringify(span));
      return span;
    });
  }

  /** Every span in sequence order. */
  listSpans(): Span[] {
    if (!this.#tables.has("spans")) return [];
    return this.#sql.exec<{ body: string }>(`SELECT body FROM spans ORDER BY sequence_id`).toArray().map((row) => JSON.parse(row.body) as Span);
  }

  /** The conversation an external agent reported at finish, if any. */
  readFinalMessages(): ChatMessage[] | null {
    const raw = this.#getMeta("final_messages");
    return raw === undefined ? null : (raw as ChatMessage[]);
  }

  writeFinalMessages(messages: ChatMessage[]): void {
    this.#putMeta("final_messages", ChatMessage.array().parse(messages));
  }

  /** Every call in the order recorded, decoded. */
  listCalls(): LlmCall[] {
    const rows = this.#sql.exec<{ seq: number; call_id: string; body: string }>(`SELECT seq, call_id, body FROM llm_calls ORDER BY seq`).toArray();
    const extra = this.#readParts(CALL_PART);
    const calls: LlmCall[] = [];
    for (const row of rows) {
      const stored = JSON.parse(row.body + (extra.get(`${CALL_PART}${row.call_id}`) ?? "")) as StoredCall;
      calls.push(decodeCall(stored, calls.at(-1) ?? null));
    }
    this.#lastCall = calls.at(-1) ?? null;
    return calls;
  }
}
