/** @module SQLite tables of one rollout session: meta (spec, state), steps, llm_calls. */
import type { LlmCall } from "../../schemas/llm-call";
import { RolloutSpec } from "../../schemas/rollout-api";
import type { Step } from "../../schemas/step";
import type { JsonValue } from "../../schemas/json";
import { ChatMessage } from "../../schemas/chat";
import { Span, SpanInput } from "../../schemas/span";
import type { SqlPort } from "../../ports";
import { SessionState } from "./session-state";
import { CREATE_META_TABLE, readMetaText, writeMetaText } from "../meta-table";

const MIGRATIONS = [
  CREATE_META_TABLE,
  `CREATE TABLE IF NOT EXISTS steps (
     step_index INTEGER PRIMARY KEY,
     step_id TEXT NOT NULL UNIQUE,
     body TEXT NOT NULL,
     env_snapshot TEXT
   )`,
  `CREATE TABLE IF NOT EXISTS llm_calls (
     seq INTEGER PRIMARY KEY AUTOINCREMENT,
     call_id TEXT NOT NULL UNIQUE,
     step_id TEXT,
     body TEXT NOT NULL
   )`,
  `CREATE TABLE IF NOT EXISTS spans (sequence_id INTEGER PRIMARY KEY, body TEXT NOT NULL)`,
];

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
  /** The last raw JSON read per meta key and what it parsed to: a row read again unchanged is not re-validated. */
  readonly #parsed = new Map<string, { raw: string; value: unknown }>();

  constructor(sql: SqlPort) {
    this.#sql = sql;
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
   * Reads and validates a meta row, reusing the previous result while the stored text is the same.
   * Spec and state are read on every RPC; validating them each time was a measured hot spot. The
   * cached value is shared: callers copy before changing it (they build new objects with spread).
   */
  #readParsed<T>(key: string, parse: (raw: unknown) => T): T | undefined {
    const text = readMetaText(this.#sql, key);
    if (text === undefined) return undefined;
    const cached = this.#parsed.get(key);
    if (cached?.raw === text) return cached.value as T;
    const value = parse(JSON.parse(text));
    this.#parsed.set(key, { raw: text, value });
    return value;
  }

  #putMeta(key: string, value: unknown): void {
    writeMetaText(this.#sql, key, JSON.stringify(value));
  }

  /** The rollout's spec, or undefined before `create`. */
  readSpec(): RolloutSpec | undefined {
    return this.#readParsed("spec", (raw) => RolloutSpec.parse(raw));
  }

  writeSpec(spec: RolloutSpec): void {
    this.#putMeta("spec", RolloutSpec.parse(spec));
  }

  readState(): SessionState | undefined {
    return this.#readParsed("state", (raw) => SessionState.parse(raw));
  }

  writeState(state: SessionState): void {
    const valid = SessionState.parse(state);
    const raw = JSON.stringify(valid);
    writeMetaText(this.#sql, "state", raw);
    // The next read of this very text needs no second validation.
    this.#parsed.set("state", { raw, value: valid });
  }

  /** Whether a step with this id is already stored. */
  hasStep(stepId: string): boolean {
    return this.#sql.exec(`SELECT 1 AS found FROM steps WHERE step_id = ?`, stepId).toArray().length > 0;
  }

  /** Stores a step parsed with the Step schema (the caller parsed it). */
  insertStep(valid: Step, envSnapshot: JsonValue | null): void {
    this.#sql.exec(
      `INSERT INTO steps (step_index, step_id, body, env_snapshot) VALUES (?, ?, ?, ?)`,
      valid.step_index,
      valid.step_id,
      JSON.stringify(valid),
      envSnapshot === null ? null : JSON.stringify(envSnapshot),
    );
  }

  /** Stores a call parsed with the LlmCall schema (the caller parsed it); a call id seen before is ignored. */
  insertCall(valid: LlmCall): void {
    this.#sql.exec(`INSERT OR IGNORE INTO llm_calls (call_id, step_id, body) VALUES (?, ?, ?)`, valid.call_id, valid.step_id, JSON.stringify(valid));
  }

  /** Steps in order, from `afterIndex + 1` on. */
  listSteps(afterIndex = -1): StoredStep[] {
    return this.#sql
      .exec<{ body: string; env_snapshot: string | null }>(`SELECT body, env_snapshot FROM steps WHERE step_index > ? ORDER BY step_index`, afterIndex)
      .toArray()
      .map((row) => ({ step: JSON.parse(row.body) as Step, envSnapshot: row.env_snapshot === null ? null : (JSON.parse(row.env_snapshot) as JsonValue) }));
  }

  /** Appends spans in order and returns them with their sequence ids (1, 2, … per rollout). */
  appendSpans(inputs: SpanInput[], now: number): Span[] {
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

  /** Every call in the order recorded. */
  listCalls(): LlmCall[] {
    return this.#sql.exec<{ body: string }>(`SELECT body FROM llm_calls ORDER BY seq`).toArray().map((row) => JSON.parse(row.body) as LlmCall);
  }
}
