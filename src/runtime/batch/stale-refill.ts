/**
 * @module A batch's groups lost to the staleness rule (src/training/staleness.ts) and their
 * replacement. A group is lost when a member was ended STALE while it ran (the tracker's own
 * verdict, `cancelled`) or when the feed dropped it at pull time (`stale`, told by the feed after
 * the tracker had judged it). Each lost group, up to the batch's `refill_budget`, is replaced by a
 * reserve row (the over-sampling rows beyond `target_groups`): the batch's target counts only
 * groups that can still be trained, and a batch already cut or finished is reopened to release
 * the next row. Past the budget, or without reserve rows left, the batch ends short and says so
 * (`unreplaced`).
 */
import type { Clock, SqlPort, StoragePort } from "../../ports";
import type { BatchRefill } from "../../schemas/batch";
import { groupsDelivered } from "./batch-signal";
import type { BatchRecord } from "./batch-state";
import type { BatchStorage, StoredVerdict } from "./batch-storage";

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS lost_groups (
     row_index INTEGER PRIMARY KEY,
     reason TEXT NOT NULL,
     policy_version INTEGER,
     lost_at INTEGER NOT NULL,
     judged_delivered INTEGER NOT NULL,
     refilled INTEGER NOT NULL
   )`,
  // One row: since when a `wait` batch holds its new rollouts (absent: it does not).
  `CREATE TABLE IF NOT EXISTS stale_hold (id INTEGER PRIMARY KEY CHECK (id = 1), since INTEGER NOT NULL)`,
];

/** Why a group was lost to staleness: ended while it ran, or dropped by the feed when pulled. */
export type LostReason = "cancelled" | "stale";

/** What the refill logic needs from its tracker. */
export interface StaleRefillDeps {
  sql: SqlPort;
  storage: BatchStorage;
  transactionSync: StoragePort["transactionSync"];
  now: Clock;
}

/** Groups that reach the trainer as the tracker judged them: delivered whole, or their valid members. */
function delivered(verdict: StoredVerdict | undefined): boolean {
  return verdict === "deliver" || verdict === "deliver_valid";
}

/** The lost groups of one batch, its refill budget's use, and a `wait` batch's hold. */
export class StaleRefill {
  readonly #deps: StaleRefillDeps;

  constructor(deps: StaleRefillDeps) {
    this.#deps = deps;
    for (const statement of SCHEMA) deps.sql.exec(statement);
  }

  /**
   * Records row `rowIndex`'s group as lost (once: a second notice of the same group changes
   * nothing) and whether it is refilled (within the budget); a `wait` batch starts holding.
   * Returns false for a group already recorded.
   */
  record(
    record: BatchRecord,
    rowIndex: number,
    reason: LostReason,
    policyVersion: number | null,
  ): boolean {
    return this.#deps.transactionSync(() => {
      const { sql, storage, now } = this.#deps;
      const judged = delivered(storage.verdictOf(rowIndex)?.verdict) ? 1 : 0;
      // Only an over-sampled batch has reserve rows to refill from, and only while one is unreleased.
      const reserve = Math.ceil(record.next_index / record.n) < record.rows;
      const refilled =
        record.target_groups !== null &&
        reserve &&
        this.counts(record).refilled < record.refill_budget
          ? 1
          : 0;
      const added =
        sql
          .exec(
            `INSERT OR IGNORE INTO lost_groups (row_index, reason, policy_version, lost_at, judged_delivered, refilled)
             VALUES (?, ?, ?, ?, ?, ?) RETURNING row_index`,
            rowIndex,
            reason,
            policyVersion,
            now(),
            judged,
            refilled,
          )
          .toArray().length > 0;
      if (added && record.on_stale === "wait")
        sql.exec(`INSERT OR IGNORE INTO stale_hold (id, since) VALUES (1, ?)`, now());
      return added;
    });
  }

  /** The batch view's account of lost groups and refills. */
  counts(record: Pick<BatchRecord, "refill_budget">): BatchRefill {
    const rows = this.#deps.sql
      .exec<{ reason: string; refilled: number; n: number }>(
        `SELECT reason, refilled, COUNT(*) AS n FROM lost_groups GROUP BY reason, refilled`,
      )
      .toArray();
    const sum = (pick: (row: (typeof rows)[number]) => boolean) =>
      rows.filter(pick).reduce((total, row) => total + row.n, 0);
    return {
      stale: sum((row) => row.reason === "stale"),
      cancelled: sum((row) => row.reason === "cancelled"),
      refilled: sum((row) => row.refilled === 1),
      unreplaced: sum((row) => row.refilled === 0),
      budget: record.refill_budget,
      holding_since: this.holdingSince(),
    };
  }

  /**
   * Groups with signal that can still be trained: those the tracker judged delivered, less those
   * the feed dropped afterwards for staleness.
   */
  trainable(verdicts: Map<StoredVerdict, number>): number {
    const dropped =
      this.#deps.sql
        .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM lost_groups WHERE judged_delivered = 1`)
        .toArray()[0]?.n ?? 0;
    return groupsDelivered(verdicts) - dropped;
  }

  /**
   * Whether an over-sampled batch has what it needs: `target_groups` trainable groups, less one
   * for each lost group past the refill budget (those are not replaced: the batch ends short).
   */
  targetMet(record: BatchRecord): boolean {
    if (record.target_groups === null) return false;
    const { unreplaced } = this.counts(record);
    return this.trainable(this.#deps.storage.countVerdicts()) >= record.target_groups - unreplaced;
  }

  /**
   * Reopens a batch that was cut (or finished) before a group it counted was lost, when the
   * target is no longer met and reserve rows remain: the next row is released as if the cut had
   * not happened (the cut's part-released row keeps its cut stand-ins; release resumes at the next
   * row). Returns the reopened record, or null when nothing changes.
   */
  reopen(): BatchRecord | null {
    const { storage, now } = this.#deps;
    return this.#deps.transactionSync(() => {
      const record = storage.readBatch();
      if (!record || record.cancelled_at !== null || record.target_groups === null) return null;
      if (record.cut_at === null && record.finished_at === null) return null;
      if (this.targetMet(record)) return null;
      const nextRow = Math.ceil(record.next_index / record.n) * record.n;
      if (nextRow >= record.rows * record.n) return null;
      const at = now();
      const reopened: BatchRecord = {
        ...record,
        cut_at: null,
        finished_at: null,
        next_index: nextRow,
        updated_at: at,
      };
      storage.writeBatch(reopened);
      return reopened;
    });
  }

  /** Since when a `wait` batch holds its new rollouts, or null. */
  holdingSince(): number | null {
    return (
      this.#deps.sql
        .exec<{ since: number }>(`SELECT since FROM stale_hold WHERE id = 1`)
        .toArray()[0]?.since ?? null
    );
  }

  /** Ends the hold (the trainer caught up). */
  release(): void {
    this.#deps.sql.exec(`DELETE FROM stale_hold`);
  }
}
