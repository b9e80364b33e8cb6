/**
 * @module SQLite tables of one rollout session: meta (spec, state), steps (each with the state
 * its commit left), llm_calls, spans (layouts in session-tables.ts). Any value may be longer than
 * a SQLite row allows (~2 MB): its text is split over `value_parts` (see `value-parts.ts`), and
 * calls are stored against the call before them (`call-codec.ts`), so storage grows with the
 * conversation, not with calls × context.
 */
import type { LlmCall } from "../../../schemas/llm-call";
import { RolloutSpec } from "../../../schemas/rollout-api";
import type { Step } from "../../../schemas/step";
import type { JsonValue } from "../../../schemas/json";
import { ChatMessage } from "../../../schemas/chat";
import { Span, SpanInput } from "../../../schemas/span";
import type { SqlPort } from "../../../ports";
import { parseStateChange, type SessionState, StoredSessionState } from "./session-state";
import { readMetaText, writeMetaText } from "../../meta-table";
import { migrateSessionTables } from "./session-tables";
import { CountingSql } from "../../sql-counter";
import { splitText } from "../../value-parts";
import { SessionValueParts } from "./session-value-parts";
import { LazyTables } from "./lazy-tables";
import { decodeCall, encodeCall, type StoredCall } from "./call-codec";

/** Owners of a step's, a call's and a meta value's extra parts in `value_parts`. */
const STEP_PART = "step:";
const ENV_PART = "env:";
const CALL_PART = "call:";
const META_PART = "meta:";

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
  /** The spec as read back from storage (see `readSpec`); null when a read found none, undefined when not read. */
  #spec: RolloutSpec | null | undefined;
  /**
   * The state as last read or written, validated. This object is the only writer of its storage,
   * so memory and storage agree except after a rolled-back transaction, which `forgetCached`
   * handles; every RPC reads the state, and the row read was a measured share of a step's CPU.
   * Null when a read found none (a session being created reads it before and while writing it).
   */
  #state: SessionState | null | undefined;
  /**
   * The last call stored, decoded: the base the next call is encoded against. Null when there is
   * none; undefined when not known (a fresh object, or after a rollback): read from the table.
   */
  #lastCall: LlmCall | null | undefined;
  /** Extra parts of values longer than a part (see session-value-parts.ts). */
  readonly #parts: SessionValueParts;
  /**
   * The ids of the calls stored (undefined until read): a recorded call is idempotent by id, and
   * this object is the table's only writer, so the check needs no index (see session-tables.ts).
   */
  #callIds: Set<string> | undefined;
  /**
   * The meta keys written since this object created its tables (undefined when they existed
   * before, or after a rollback): any other key is known to be absent, and is not read.
   */
  #metaWritten: Set<string> | undefined;
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
    this.#parts = new SessionValueParts(sql, this.#tables);
  }

  /** Creates the tables if they do not exist, or brings earlier layouts up to date (idempotent). */
  migrate(): void {
    const { tables, fresh } = migrateSessionTables(this.#sql);
    this.#tables.learn(tables);
    if (!fresh) return;
    // A new session (every rollout starts one): its tables were created empty just now, so what a
    // create reads before it writes (spec, state, calls, meta values) is known without a read.
    this.#spec = null;
    this.#state = null;
    this.#lastCall = null;
    this.#callIds = new Set();
    this.#metaWritten = new Set();
  }

  /** A meta value's whole text: its row and, for one longer than a part, its extra parts. */
  #readMeta(key: string): string | undefined {
    if (this.#metaWritten && !this.#metaWritten.has(key)) return undefined;
    const text = readMetaText(this.#sql, key);
    if (text === undefined) return undefined;
    const owner = `${META_PART}${key}`;
    return text + (this.#parts.read(owner).get(owner) ?? "");
  }

  #getMeta(key: string): unknown {
    const text = this.#readMeta(key);
    return text === undefined ? undefined : JSON.parse(text);
  }

  /**
   * Reads and validates a meta row. Spec and state are kept once read (see `readSpec`,
   * `readState`), so this runs once per object, or once after a rollback. The value is shared:
   * callers copy before changing it (they build new objects with spread).
   */
  #readParsed<T>(key: string, parse: (raw: unknown) => T): T | undefined {
    const text = this.#readMeta(key);
    return text === undefined ? undefined : parse(JSON.parse(text));
  }

  /**
   * Stores a meta value of any length (a spec whose task carries a long prompt, a workflow's long
   * final conversation): over a part, the rest goes to `value_parts`, replacing any earlier value's.
   */
  #putMeta(key: string, value: unknown): void {
    const parts = splitText(JSON.stringify(value));
    const owner = `${META_PART}${key}`;
    this.#parts.drop(owner);
    writeMetaText(this.#sql, key, parts[0]!);
    this.#metaWritten?.add(key);
    this.#parts.write(owner, parts);
  }

  /** The rollout's spec, or undefined before `create`. */
  readSpec(): RolloutSpec | undefined {
    // Written once by `create` and never changed, so it is kept once read or written (a rollback
    // forgets it): every RPC reads it, and the row read was a measured share of a step's CPU. A
    // spec found missing stays missing until `writeSpec` (this object is its only writer).
    this.#spec ??= this.#readParsed("spec", (raw) => RolloutSpec.parse(raw)) ?? null;
    return this.#spec ?? undefined;
  }

  /** Stores the spec of a rollout being created: once, before any step or call of it exists. */
  writeSpec(spec: RolloutSpec): void {
    const valid = RolloutSpec.parse(spec);
    this.#putMeta("spec", valid);
    // Kept as written: a transaction that rolls the write back calls `forgetCached`, which drops it.
    this.#spec = valid;
    // Its calls table is empty, so the first call needs no read to learn that (a rollback of the
    // create forgets these again).
    this.#lastCall = null;
    this.#callIds = new Set();
  }

  /** The current state: the higher revision of the `meta` row and the latest step's row (see `insertStep`). */
  readState(): SessionState | undefined {
    // Null: none was found, and none written since (every write sets it; a rollback forgets it).
    if (this.#state !== undefined) return this.#state ?? undefined;
    const meta = this.#readParsed("state", (raw) => StoredSessionState.parse(raw));
    const text = this.#sql
      .exec<{ state: string }>(
        `SELECT state FROM steps WHERE state IS NOT NULL ORDER BY step_index DESC LIMIT 1`,
      )
      .toArray()[0]?.state;
    const stepped = text === undefined ? undefined : StoredSessionState.parse(JSON.parse(text));
    this.#state = (stepped && (!meta || stepped.revision > meta.revision) ? stepped : meta) ?? null;
    return this.#state ?? undefined;
  }

  /**
   * Forgets what is kept in memory (the state, the last call, whether values were split), so the next read goes to
   * storage: called when a transaction rolls back (its writes are undone, memory's are not).
   */
  forgetCached(): void {
    this.#state = undefined;
    this.#spec = undefined;
    this.#metaWritten = undefined;
    this.#lastCall = undefined;
    this.#callIds = undefined;
    this.#parts.forget();
    this.#tables.forget();
  }

  /** Validates and writes the state; fields unchanged since the last valid state read or written are not parsed again. */
  writeState(state: SessionState): void {
    const valid = this.#nextRevision(state);
    writeMetaText(this.#sql, "state", JSON.stringify(valid));
    this.#metaWritten?.add("state");
    this.#state = valid;
  }

  /** `state` validated (see `parseStateChange`), numbered one revision past the state current now. */
  #nextRevision(state: SessionState): SessionState {
    return parseStateChange(
      { ...state, revision: (this.readState()?.revision ?? 0) + 1 },
      this.#state ?? undefined,
    );
  }

  /** Whether a step with this id is already stored. */
  hasStep(stepId: string): boolean {
    return (
      this.#sql.exec(`SELECT 1 AS found FROM steps WHERE step_id = ?`, stepId).toArray().length > 0
    );
  }

  /**
   * Stores a step parsed with the Step schema (the caller parsed it); its texts may be any length.
   * With `stateAfter`, the session state as this commit leaves it is validated and stored in the
   * same row instead of the `meta` row: a commit then writes one row for the step and the state
   * (every row written is billed). `readState` takes whichever of the two is the later revision.
   */
  insertStep(valid: Step, envSnapshot: JsonValue | null, stateAfter?: SessionState): void {
    const body = splitText(JSON.stringify(valid));
    const env = envSnapshot === null ? null : splitText(JSON.stringify(envSnapshot));
    const state = stateAfter && this.#nextRevision(stateAfter);
    this.#sql.exec(
      `INSERT INTO steps (step_index, step_id, body, env_snapshot, state) VALUES (?, ?, ?, ?, ?)`,
      valid.step_index,
      valid.step_id,
      body[0]!,
      env === null ? null : env[0]!,
      state ? JSON.stringify(state) : null,
    );
    this.#parts.write(`${STEP_PART}${valid.step_index}`, body);
    if (env) this.#parts.write(`${ENV_PART}${valid.step_index}`, env);
    if (state) this.#state = state;
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
    this.#sql.exec(
      `INSERT INTO llm_calls (call_id, step_id, body) VALUES (?, ?, ?)`,
      valid.call_id,
      valid.step_id,
      parts[0]!,
    );
    this.#parts.write(`${CALL_PART}${valid.call_id}`, parts);
    ids.add(valid.call_id);
    this.#lastCall = valid;
    return true;
  }

  /** Whether a call with this id is stored. */
  hasCall(callId: string): boolean {
    return this.#storedCallIds().has(callId);
  }

  /**
   * The ids of the calls stored: from memory, or (a fresh object, or after a rollback) read with
   * the calls themselves, which the next insert needs as its base anyway.
   */
  #storedCallIds(): Set<string> {
    if (!this.#callIds) this.listCalls();
    return this.#callIds!;
  }

  /**
   * Sets a stored call's `policy_version_end`, which is stored as it is (not against the call
   * before), so the row is changed in place and no later call's encoding depends on it. Refused
   * (nothing written) when no call has this id, or when the version is older than the call's start.
   */
  setCallVersionEnd(callId: string, version: number): "set" | "missing" | "older" {
    const row = this.#sql
      .exec<{ body: string }>(`SELECT body FROM llm_calls WHERE call_id = ?`, callId)
      .toArray()[0];
    if (!row) return "missing";
    const owner = `${CALL_PART}${callId}`;
    const stored = JSON.parse(row.body + (this.#parts.read(owner).get(owner) ?? "")) as StoredCall;
    if (version < stored.policy_version_start) return "older";
    const parts = splitText(JSON.stringify({ ...stored, policy_version_end: version }));
    this.#sql.exec(`UPDATE llm_calls SET body = ? WHERE call_id = ?`, parts[0]!, callId);
    this.#parts.drop(owner);
    this.#parts.write(owner, parts);
    if (this.#lastCall?.call_id === callId)
      this.#lastCall = { ...this.#lastCall, policy_version_end: version };
    return "set";
  }

  /** The last stored call, decoded: from memory, or (not known yet) read with every call before it. */
  #previousCall(): LlmCall | null {
    return this.#lastCall === undefined ? (this.listCalls().at(-1) ?? null) : this.#lastCall;
  }

  /**
   * The newest stored call that `wanted` accepts, decoded: the last call from memory when it is one
   * (a harness's turns follow each other), else read with every call before it.
   */
  lastCallWhere(wanted: (call: LlmCall) => boolean): LlmCall | null {
    const last = this.#previousCall();
    if (last === null || wanted(last)) return last;
    const calls = this.listCalls();
    for (let i = calls.length - 1; i >= 0; i--) if (wanted(calls[i]!)) return calls[i]!;
    return null;
  }

  /** Steps in order, from `afterIndex + 1` on. */
  listSteps(afterIndex = -1): StoredStep[] {
    const rows = this.#sql
      .exec<{ step_index: number; body: string; env_snapshot: string | null }>(
        `SELECT step_index, body, env_snapshot FROM steps WHERE step_index > ? ORDER BY step_index`,
        afterIndex,
      )
      .toArray();
    const bodies = this.#parts.read(STEP_PART);
    const envs = this.#parts.read(ENV_PART);
    return rows.map((row) => ({
      step: JSON.parse(row.body + (bodies.get(`${STEP_PART}${row.step_index}`) ?? "")) as Step,
      envSnapshot:
        row.env_snapshot === null
          ? null
          : (JSON.parse(
              row.env_snapshot + (envs.get(`${ENV_PART}${row.step_index}`) ?? ""),
            ) as JsonValue),
    }));
  }

  /** Appends spans in order and returns them with their sequence ids (1, 2, … per rollout). */
  appendSpans(inputs: SpanInput[], now: number): Span[] {
    if (inputs.length === 0) return [];
    this.#tables.ensure("spans");
    // The object is single-writer, so the next id read here cannot be taken by anyone else.
    let next =
      this.#sql
        .exec<{ last: number }>(`SELECT COALESCE(MAX(sequence_id), 0) AS last FROM spans`)
        .toArray()[0]!.last + 1;
    return inputs.map((input) => {
      const span = Span.parse({ ...SpanInput.parse(input), sequence_id: next++, created_at: now });
      this.#sql.exec(
        `INSERT INTO spans (sequence_id, body) VALUES (?, ?)`,
        span.sequence_id,
        JSON.stringify(span),
      );
      return span;
    });
  }

  /** Every span in sequence order. */
  listSpans(): Span[] {
    if (!this.#tables.has("spans")) return [];
    return this.#sql
      .exec<{ body: string }>(`SELECT body FROM spans ORDER BY sequence_id`)
      .toArray()
      .map((row) => JSON.parse(row.body) as Span);
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
    const rows = this.#sql
      .exec<{ seq: number; call_id: string; body: string }>(
        `SELECT seq, call_id, body FROM llm_calls ORDER BY seq`,
      )
      .toArray();
    const extra = this.#parts.read(CALL_PART);
    const calls: LlmCall[] = [];
    for (const row of rows) {
      const stored = JSON.parse(
        row.body + (extra.get(`${CALL_PART}${row.call_id}`) ?? ""),
      ) as StoredCall;
      calls.push(decodeCall(stored, calls.at(-1) ?? null));
    }
    this.#lastCall = calls.at(-1) ?? null;
    this.#callIds = new Set(rows.map((row) => row.call_id));
    return calls;
  }
}
