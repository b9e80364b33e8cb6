/**
 * @module A batch's side of KV-pressure control (src/runtime/pressure): on its alarm the tracker
 * asks the policy object for its share of the rollouts in flight and keeps it as its release
 * limit; when the controller declares sustained overload it cancels its youngest rollouts above
 * the share and queues their slots to run again later. A requeued run is superseded, not failed:
 * its slot's next run does not spend the infrastructure retry budget (`max_member_retries`), and
 * its session is cancelled `superseded`, so the run's own result says so and the feed's group waits
 * for the re-run instead of closing on a cancelled member.
 */
import type { SqlPort, StoragePort } from "../../ports";
import { MAX_MEMBER_RETRIES } from "../../schemas/member-outcome";
import type { PressureShare } from "../../schemas/pressure";
import { eachLimited } from "../each-limited";
import { CREATE_META_TABLE, readMetaText, writeMetaText } from "../meta-table";
import type { RolloutSessionsPort } from "./batch-ports";
import { type BatchRecord, type RolloutSlot, retrySlot } from "./batch-state";
import type { BatchStorage, RolloutOutcome } from "./batch-storage";

/** The policy object as a tracker asks it (one request per tracker alarm, never per rollout). */
export interface PressurePort {
  share(batchId: string, maxConcurrent: number, live: number): Promise<PressureShare>;
}

/** What the tracker's pressure side needs. */
export interface BatchPressureDeps {
  sql: SqlPort;
  storage: BatchStorage;
  transactionSync: StoragePort["transactionSync"];
  sessions: RolloutSessionsPort;
  policy: PressurePort;
  now: () => number;
}

/** What the tracker last heard, and the last overload it acted on. */
interface Heard {
  enabled: boolean;
  share: number;
  acted_epoch: number;
  /** When the tracker asked (absent in rows written before it was kept). */
  asked_at?: number;
}

/**
 * How often a tracker that heard control is off asks again. Control is off by default, and a
 * deployment running hundreds of batches would otherwise spend one policy-object request per
 * batch every tracker alarm (5 s) to learn nothing; turning control on reaches batches within this.
 */
export const OFF_RECHECK_MS = 60_000;

const MIGRATIONS = [
  CREATE_META_TABLE,
  // Slots whose run was cancelled under pressure, waiting for room to run again (oldest first).
  `CREATE TABLE IF NOT EXISTS requeued_slots (
     rollout_id TEXT PRIMARY KEY, row_index INTEGER NOT NULL, sample_index INTEGER NOT NULL,
     attempt INTEGER NOT NULL, queued_at INTEGER NOT NULL
   ) WITHOUT ROWID`,
];

/** A requeued run: cancelled, and superseded by its slot's next run. */
const REQUEUED = `superseded = 1 AND termination_reason = 'CANCELLED'`;
const REQUEUED_OUTCOME: RolloutOutcome = {
  status: "cancelled",
  termination_reason: "CANCELLED",
  reward: null,
  outcome: "cut",
  superseded: true,
};

/** The tracker's share of the budget, and its requeued slots. */
export class BatchPressure {
  readonly #deps: BatchPressureDeps;

  constructor(deps: BatchPressureDeps) {
    this.#deps = deps;
    for (const statement of MIGRATIONS) deps.sql.exec(statement);
  }

  /** Rollouts the batch may keep in flight: its share while control is on, else `max_concurrent`. */
  limit(record: BatchRecord): number {
    const heard = this.#heard();
    return heard?.enabled ? Math.min(record.max_concurrent, heard.share) : record.max_concurrent;
  }

  /** Requeued slots waiting to run. */
  pending(): number {
    return (
      this.#deps.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM requeued_slots`).toArray()[0]
        ?.n ?? 0
    );
  }

  /** Removes and answers up to `count` requeued slots, oldest first (the caller releases them). */
  take(count: number): RolloutSlot[] {
    if (count <= 0) return [];
    return this.#deps.sql
      .exec<{ rollout_id: string; row_index: number; sample_index: number; attempt: number }>(
        `DELETE FROM requeued_slots WHERE rollout_id IN
           (SELECT rollout_id FROM requeued_slots ORDER BY queued_at, rollout_id LIMIT ?)
         RETURNING rollout_id, row_index, sample_index, attempt`,
        count,
      )
      .toArray()
      .map((row) => ({ ...row, parent_id: null }));
  }

  /** Runs of this slot that were requeued: added to its retry budget, so a requeue is never a failure. */
  requeuesOf(slot: Pick<RolloutSlot, "row_index" | "sample_index">): number {
    return (
      this.#deps.sql
        .exec<{ n: number }>(
          `SELECT COUNT(*) AS n FROM rollouts WHERE row_index = ? AND sample_index = ? AND ${REQUEUED}`,
          slot.row_index,
          slot.sample_index,
        )
        .toArray()[0]?.n ?? 0
    );
  }

  /**
   * The alarm's ask: the batch's share (kept as its limit) and, once per overload the controller
   * declares, the youngest live rollouts above the share cancelled and requeued. Answers how many
   * were requeued. A policy object that does not answer leaves the last share in force.
   */
  async follow(record: BatchRecord): Promise<number> {
    const before = this.#heard();
    const now = this.#deps.now();
    if (before && !before.enabled && now - (before.asked_at ?? 0) < OFF_RECHECK_MS) return 0;
    const live = this.#deps.storage.countLive();
    let heard: PressureShare;
    try {
      heard = await this.#deps.policy.share(record.batch_id, record.max_concurrent, live);
    } catch (error) {
      console.error("pressure share not read", { batch_id: record.batch_id, error: String(error) });
      return 0;
    }
    const actedEpoch = before?.acted_epoch ?? heard.requeue_epoch;
    const overloaded = heard.enabled && heard.requeue_epoch > actedEpoch;
    this.#write({
      enabled: heard.enabled,
      share: heard.share,
      acted_epoch: heard.requeue_epoch,
      asked_at: now,
    });
    if (!overloaded || live <= heard.share) return 0;
    return this.requeueYoungest(live - heard.share);
  }

  /** Cancels up to `count` of the youngest live root rollouts and queues their slots to run again. */
  async requeueYoungest(count: number): Promise<number> {
    const { sql, storage } = this.#deps;
    const now = this.#deps.now();
    const chosen = this.#deps.transactionSync(() => {
      // Roots only: a tree child re-forks from its parent's run, which requeueing would not redo;
      // and a slot whose run numbers are used up (the group schema's bound) runs on.
      const youngest = sql
        .exec<{ rollout_id: string; row_index: number; sample_index: number; attempt: number }>(
          `SELECT rollout_id, row_index, sample_index, attempt FROM rollouts
           WHERE status IN ('queued', 'running') AND superseded = 0 AND parent_id IS NULL AND attempt < ?
           ORDER BY released_at DESC, rowid DESC LIMIT ?`,
          MAX_MEMBER_RETRIES,
          count,
        )
        .toArray();
      return youngest.filter((slot) => {
        if (!storage.recordOutcome(slot.rollout_id, REQUEUED_OUTCOME, now)) return false;
        const next = retrySlot(slot, slot.attempt + 1);
        sql.exec(
          `INSERT OR IGNORE INTO requeued_slots (rollout_id, row_index, sample_index, attempt, queued_at) VALUES (?, ?, ?, ?, ?)`,
          next.rollout_id,
          next.row_index,
          next.sample_index,
          next.attempt ?? 0,
          now,
        );
        return true;
      });
    });
    await eachLimited(chosen, 16, async (slot) => {
      // The session publishes the run superseded itself: one message, so no order of arrival can
      // make the feed hold it as a member. A run that ended on its own first keeps its real end.
      try {
        await this.#deps.sessions.cancel(slot.rollout_id, { superseded: true });
      } catch (error) {
        console.error("requeued rollout not cancelled", {
          rollout_id: slot.rollout_id,
          error: String(error),
        });
      }
    });
    return chosen.length;
  }

  /** A stopped batch never re-runs its requeued slots: answers them (removed) for cut stand-ins. */
  drainStopped(): RolloutSlot[] {
    return this.take(Number.MAX_SAFE_INTEGER);
  }

  #heard(): Heard | undefined {
    const text = readMetaText(this.#deps.sql, "pressure_heard");
    return text === undefined ? undefined : (JSON.parse(text) as Heard);
  }

  #write(heard: Heard): void {
    writeMetaText(this.#deps.sql, "pressure_heard", JSON.stringify(heard));
  }
}
