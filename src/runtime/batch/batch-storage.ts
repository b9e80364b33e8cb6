/** @module SQLite tables of a batch tracker: meta (the record), rows (one task each), rollouts. */
import type { z } from "zod";
import type { SqlPort } from "../../ports";
import { AgentTask } from "../../schemas/agent-task";
import type { MemberOutcome } from "../../schemas/member-outcome";
import type { RolloutStatus, TerminationReason } from "../../schemas/termination";
import { BatchRecord, type RolloutSlot } from "./batch-state";
import type { RowTask } from "./row-task";
import { CREATE_META_TABLE, readMetaText, writeMetaText } from "../meta-table";
import { TreeStorage } from "./tree-storage";
import type { FinishedMember, StoredVerdict } from "./group-members";

export type { FinishedMember, StoredVerdict } from "./group-members";

const MIGRATIONS = [
  CREATE_META_TABLE,
  `CREATE TABLE IF NOT EXISTS rows (row_index INTEGER PRIMARY KEY, agent TEXT NOT NULL, task TEXT NOT NULL)`,
  // One row per released rollout; `created` is 1 once its session confirmed the create.
  `CREATE TABLE IF NOT EXISTS rollouts (
     rollout_id TEXT PRIMARY KEY,
     row_index INTEGER NOT NULL,
     sample_index INTEGER NOT NULL,
     status TEXT NOT NULL,
     termination_reason TEXT,
     reward REAL,
     created INTEGER NOT NULL DEFAULT 0,
     released_at INTEGER NOT NULL,
     checked_at INTEGER NOT NULL DEFAULT 0,
     terminal_seen_at INTEGER,
     finished_at INTEGER
   )`,
  `CREATE INDEX IF NOT EXISTS rollouts_status ON rollouts (status, created, checked_at)`,
  `CREATE INDEX IF NOT EXISTS rollouts_position ON rollouts (row_index, sample_index)`,
  // One row per complete GRPO group (row), with what became of it (src/training/group-verdict.ts).
  `CREATE TABLE IF NOT EXISTS group_verdicts (row_index INTEGER PRIMARY KEY, verdict TEXT NOT NULL, decided_at INTEGER NOT NULL)`,
];

/** Columns the rollouts table gained with member retries; trackers created before get them on start. */
const SIGNAL_COLUMNS: Array<[name: string, definition: string]> = [
  ["attempt", "INTEGER NOT NULL DEFAULT 0"],
  ["superseded", "INTEGER NOT NULL DEFAULT 0"],
  ["outcome", "TEXT"],
  ["metric", "REAL"],
  // What the run view reads per rollout (from its result message; null when read back from a session).
  ["completion_tokens", "INTEGER"],
  ["policy_version_start", "INTEGER"],
  ["policy_version_end", "INTEGER"],
  // A tree child's parent run (tree-slots.ts); null for a root.
  ["parent_id", "TEXT"],
];

/** A released rollout not yet terminal, with what the tracker knows about it. */
export interface LiveRollout extends RolloutSlot {
  created: boolean;
  terminal_seen_at: number | null;
}

/** How a rollout ended, as a result message or the session reports it. */
export interface RolloutOutcome {
  status: RolloutStatus;
  termination_reason: TerminationReason | null;
  reward: number | null;
  /** Whether it may be scored; absent (read back from an older session), derived from the reason. */
  outcome?: MemberOutcome | null;
  /** The batch filter's metric value. */
  metric?: number | null;
  /** An infrastructure failure whose slot is re-run. */
  superseded?: boolean;
  /** Completion tokens its calls generated, and its calls' policy versions (the result message's; absent when read back). */
  completion_tokens?: number | null;
  policy_version_start?: number | null;
  policy_version_end?: number | null;
}

const LIVE = `status IN ('queued', 'running')`;
/** Each slot's current run: a superseded first run is history, not the slot's state. */
const CURRENT = `superseded = 0`;

/** Typed reads and validated writes over the tracker's tables. */
export class BatchStorage {
  readonly #sql: SqlPort;
  /** A tree batch's node groups and slots. */
  readonly tree: TreeStorage;

  constructor(sql: SqlPort) {
    this.#sql = sql;
    this.tree = new TreeStorage(sql);
  }

  /** Creates the tables if they do not exist (idempotent). */
  migrate(): void {
    for (const statement of MIGRATIONS) this.#sql.exec(statement);
    const columns = new Set(
      this.#sql
        .exec<{ name: string }>(`SELECT name FROM pragma_table_info('rollouts')`)
        .toArray()
        .map((column) => column.name),
    );
    for (const [name, definition] of SIGNAL_COLUMNS)
      if (!columns.has(name))
        this.#sql.exec(`ALTER TABLE rollouts ADD COLUMN ${name} ${definition}`);
    this.tree.migrate();
  }

  /** The batch, or undefined before it was submitted. */
  readBatch(): BatchRecord | undefined {
    const text = readMetaText(this.#sql, "batch");
    return text !== undefined ? BatchRecord.parse(JSON.parse(text)) : undefined;
  }

  /** Validates and stores the batch record (fields it lacks get their defaults). */
  writeBatch(record: z.input<typeof BatchRecord>): void {
    const value = JSON.stringify(BatchRecord.parse(record));
    writeMetaText(this.#sql, "batch", value);
  }

  /** Stores the rows' tasks, one SQLite row each (the caller keeps each under the 2 MB row limit). */
  insertRows(tasks: RowTask[]): void {
    tasks.forEach((rowTask, index) => {
      this.#sql.exec(
        `INSERT INTO rows (row_index, agent, task) VALUES (?, ?, ?)`,
        index,
        rowTask.agent,
        JSON.stringify(AgentTask.parse(rowTask.task)),
      );
    });
  }

  /** The task of row `rowIndex`. */
  readRow(rowIndex: number): RowTask {
    const row = this.#sql
      .exec<{ agent: string; task: string }>(
        `SELECT agent, task FROM rows WHERE row_index = ?`,
        rowIndex,
      )
      .toArray()[0];
    if (!row) throw new Error(`batch row ${rowIndex} is missing`);
    return { agent: row.agent, task: AgentTask.parse(JSON.parse(row.task)) };
  }

  /** Records rollouts as released (queued, not yet confirmed by their sessions). */
  insertReleased(slots: RolloutSlot[], now: number): void {
    for (const slot of slots) {
      this.#sql.exec(
        `INSERT OR IGNORE INTO rollouts (rollout_id, row_index, sample_index, attempt, parent_id, status, released_at) VALUES (?, ?, ?, ?, ?, 'queued', ?)`,
        slot.rollout_id,
        slot.row_index,
        slot.sample_index,
        slot.attempt ?? 0,
        slot.parent_id ?? null,
        now,
      );
    }
  }

  /** The slot `rolloutId` runs in (with its attempt), or undefined if the batch never released it. */
  slotOf(rolloutId: string): RolloutSlot | undefined {
    return this.#sql
      .exec<{
        rollout_id: string;
        row_index: number;
        sample_index: number;
        attempt: number;
        parent_id: string | null;
      }>(
        `SELECT rollout_id, row_index, sample_index, attempt, parent_id FROM rollouts WHERE rollout_id = ?`,
        rolloutId,
      )
      .toArray()[0];
  }

  /** Whether the batch released `rolloutId`. */
  hasRollout(rolloutId: string): boolean {
    return (
      this.#sql.exec(`SELECT 1 AS found FROM rollouts WHERE rollout_id = ?`, rolloutId).toArray()
        .length > 0
    );
  }

  /** Released rollouts that are not terminal: they hold a slot of `max_concurrent`. */
  countLive(): number {
    return (
      this.#sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM rollouts WHERE ${LIVE}`).toArray()[0]
        ?.n ?? 0
    );
  }

  /** Live rollouts, unconfirmed ones first, then the longest unchecked; at most `limit`. */
  listLive(limit: number): LiveRollout[] {
    return this.#sql
      .exec<{
        rollout_id: string;
        row_index: number;
        sample_index: number;
        attempt: number;
        parent_id: string | null;
        created: number;
        terminal_seen_at: number | null;
      }>(
        `SELECT rollout_id, row_index, sample_index, attempt, parent_id, created, terminal_seen_at FROM rollouts WHERE ${LIVE} ORDER BY created, checked_at LIMIT ?`,
        limit,
      )
      .toArray()
      .map((row) => ({ ...row, created: row.created === 1 }));
  }

  /** Live rollouts whose sessions said they ended at or before `before` (their result is overdue). */
  listOverdue(before: number, limit: number): LiveRollout[] {
    return this.#sql
      .exec<{
        rollout_id: string;
        row_index: number;
        sample_index: number;
        attempt: number;
        parent_id: string | null;
        created: number;
        terminal_seen_at: number | null;
      }>(
        `SELECT rollout_id, row_index, sample_index, attempt, parent_id, created, terminal_seen_at FROM rollouts WHERE ${LIVE} AND terminal_seen_at <= ? LIMIT ?`,
        before,
        limit,
      )
      .toArray()
      .map((row) => ({ ...row, created: row.created === 1 }));
  }

  /** The session confirmed the rollout exists and is `status` (live only; a terminal row never changes). */
  markCreated(rolloutId: string, status: "queued" | "running", now: number): void {
    this.#sql.exec(
      `UPDATE rollouts SET created = 1, status = ?, checked_at = ? WHERE rollout_id = ? AND ${LIVE}`,
      status,
      now,
      rolloutId,
    );
  }

  /** The session says the rollout ended; its result message should follow (else it is read back). */
  markTerminalSeen(rolloutId: string, now: number): void {
    this.#sql.exec(
      `UPDATE rollouts SET created = 1, checked_at = ?, terminal_seen_at = COALESCE(terminal_seen_at, ?) WHERE rollout_id = ? AND ${LIVE}`,
      now,
      now,
      rolloutId,
    );
  }

  /** Records how a live rollout ended; false when it was already terminal or is unknown (a duplicate). */
  recordOutcome(rolloutId: string, outcome: RolloutOutcome, now: number): boolean {
    return (
      this.#sql
        .exec(
          `UPDATE rollouts SET status = ?, termination_reason = ?, reward = ?, outcome = ?, metric = ?, superseded = ?, finished_at = ?,
             completion_tokens = ?, policy_version_start = ?, policy_version_end = ? WHERE rollout_id = ? AND ${LIVE} RETURNING rollout_id`,
          outcome.status,
          outcome.termination_reason,
          outcome.reward,
          outcome.outcome ?? null,
          outcome.metric ?? null,
          outcome.superseded ? 1 : 0,
          now,
          outcome.completion_tokens ?? null,
          outcome.policy_version_start ?? null,
          outcome.policy_version_end ?? null,
          rolloutId,
        )
        .toArray().length > 0
    );
  }

  /**
   * Adds what a result message says to a rollout whose end was read back without it (from a
   * session of a build that did not report its outcome, or by a cancel): its outcome, metric and
   * supersession. True the first time only.
   */
  completeOutcome(rolloutId: string, outcome: RolloutOutcome): boolean {
    return (
      this.#sql
        .exec(
          `UPDATE rollouts SET outcome = ?, metric = ?, superseded = ?, completion_tokens = COALESCE(completion_tokens, ?), policy_version_start = COALESCE(policy_version_start, ?),
             policy_version_end = COALESCE(policy_version_end, ?) WHERE rollout_id = ? AND outcome IS NULL AND NOT ${LIVE} RETURNING rollout_id`,
          outcome.outcome ?? null,
          outcome.metric ?? null,
          outcome.superseded ? 1 : 0,
          outcome.completion_tokens ?? null,
          outcome.policy_version_start ?? null,
          outcome.policy_version_end ?? null,
          rolloutId,
        )
        .toArray().length > 0
    );
  }

  /** Released rollouts by status (each slot's current run). */
  countByStatus(): Map<string, number> {
    const rows = this.#sql
      .exec<{ status: string; n: number }>(
        `SELECT status, COUNT(*) AS n FROM rollouts WHERE ${CURRENT} GROUP BY status`,
      )
      .toArray();
    return new Map(rows.map((row) => [row.status, row.n]));
  }

  /** Finished rollouts by termination reason. */
  countByReason(): Map<string, number> {
    const rows = this.#sql
      .exec<{ reason: string; n: number }>(
        `SELECT termination_reason AS reason, COUNT(*) AS n FROM rollouts WHERE termination_reason IS NOT NULL AND ${CURRENT} GROUP BY termination_reason`,
      )
      .toArray();
    return new Map(rows.map((row) => [row.reason, row.n]));
  }

  /** Mean reward over finished rollouts with a reward. */
  rewardStats(): { mean: number | null; count: number } {
    const row = this.#sql
      .exec<{ mean: number | null; n: number }>(
        `SELECT AVG(reward) AS mean, COUNT(reward) AS n FROM rollouts WHERE NOT ${LIVE} AND reward IS NOT NULL AND ${CURRENT}`,
      )
      .toArray()[0];
    return { mean: row?.mean ?? null, count: row?.n ?? 0 };
  }

  /** Rollouts that failed for infrastructure and were re-run. */
  countSuperseded(): number {
    return (
      this.#sql
        .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM rollouts WHERE superseded = 1`)
        .toArray()[0]?.n ?? 0
    );
  }

  /** The current runs of row `rowIndex`'s roots that finished (a complete group has `n` of them; tree children are in their nodes' groups). */
  finishedMembers(rowIndex: number): FinishedMember[] {
    return this.#sql
      .exec<{
        rollout_id: string;
        sample_index: number;
        attempt: number;
        termination_reason: TerminationReason | null;
        outcome: MemberOutcome | null;
        metric: number | null;
        reward: number | null;
      }>(
        `SELECT rollout_id, sample_index, attempt, termination_reason, outcome, metric, reward FROM rollouts WHERE row_index = ? AND parent_id IS NULL AND ${CURRENT} AND NOT ${LIVE} ORDER BY sample_index`,
        rowIndex,
      )
      .toArray();
  }

  /** Records what became of a complete group; false if it was decided before. */
  recordVerdict(rowIndex: number, verdict: StoredVerdict, now: number): boolean {
    return (
      this.#sql
        .exec(
          `INSERT OR IGNORE INTO group_verdicts (row_index, verdict, decided_at) VALUES (?, ?, ?) RETURNING row_index`,
          rowIndex,
          verdict,
          now,
        )
        .toArray().length > 0
    );
  }

  /** What became of row `rowIndex`'s group once complete (null: not complete yet). */
  verdictOf(rowIndex: number): { verdict: StoredVerdict; decided_at: number } | null {
    return (
      this.#sql
        .exec<{ verdict: StoredVerdict; decided_at: number }>(
          `SELECT verdict, decided_at FROM group_verdicts WHERE row_index = ?`,
          rowIndex,
        )
        .toArray()[0] ?? null
    );
  }

  /** Complete groups by verdict: the rows' and a tree's nodes'. */
  countVerdicts(): Map<StoredVerdict, number> {
    const rows = this.#sql
      .exec<{ verdict: StoredVerdict; n: number }>(
        `SELECT verdict, COUNT(*) AS n FROM group_verdicts GROUP BY verdict`,
      )
      .toArray();
    const counts = this.tree.countVerdicts();
    for (const row of rows) counts.set(row.verdict, (counts.get(row.verdict) ?? 0) + row.n);
    return counts;
  }

  /** When anything about a rollout last changed (0 before the first release). */
  lastChange(): number {
    const row = this.#sql
      .exec<{ t: number | null }>(
        `SELECT MAX(MAX(released_at), COALESCE(MAX(checked_at), 0), COALESCE(MAX(finished_at), 0)) AS t FROM rollouts`,
      )
      .toArray()[0];
    return row?.t ?? 0;
  }
}
