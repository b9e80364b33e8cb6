/**
 * @module What a batch tracker does when its groups go stale: a member ended STALE takes its
 * siblings with it (the group's oldest token decides its staleness, so none of them could be
 * trained), a lost group is recorded and refilled (stale-refill.ts), and an `on_stale: "wait"`
 * batch holds its new rollouts until the feed holds none of its groups ready, unpulled.
 */
import { z } from "zod";
import type { Clock } from "../../ports";
import { DropReason } from "../../schemas/feed";
import type { BatchRecord, RolloutSlot } from "./batch-state";
import type { BatchStorage } from "./batch-storage";
import type { FanOut } from "./fan-out";
import type { BatchSignal } from "./batch-signal";
import type { LostReason, StaleRefill } from "./stale-refill";

/** What the feed tells a tracker about one of its groups it dropped (validated: RPC callers are not trusted). */
export const GroupDropNotice = z.object({
  uid: z.string().min(1),
  reason: DropReason,
  policy_version: z.int().min(0).nullable().default(null),
});
export type GroupDropNotice = z.infer<typeof GroupDropNotice>;

/** How a tracker learns whether the trainer has caught up with its batch: ready groups the feed holds. */
export interface FeedBacklogPort {
  readyGroups(batchId: string): Promise<number>;
}

/** What the stale-group logic needs from its tracker. */
export interface StaleGroupsDeps {
  storage: BatchStorage;
  refill: StaleRefill;
  fanOut: FanOut;
  signal: BatchSignal;
  /** Re-arms the tracker's alarm (a reopened batch runs again). */
  rearm: () => Promise<void>;
  feed?: FeedBacklogPort;
  now: Clock;
}

/** Row `n` of the batch from a root group's uid `<batch_id>:<n>`; undefined for another batch's or a tree node's. */
function rowOfUid(record: BatchRecord, uid: string): number | undefined {
  const prefix = `${record.batch_id}:`;
  if (!uid.startsWith(prefix)) return undefined;
  const rest = uid.slice(prefix.length);
  if (!/^(0|[1-9][0-9]*)$/.test(rest)) return undefined;
  const row = Number(rest);
  return row < record.rows ? row : undefined;
}

/** A batch's side of the staleness rule. */
export class StaleGroups {
  readonly #deps: StaleGroupsDeps;

  constructor(deps: StaleGroupsDeps) {
    this.#deps = deps;
  }

  /**
   * The feed dropped one of this batch's groups: a `stale` drop is recorded as lost and refilled;
   * other reasons were the tracker's own verdicts and change nothing. Returns whether it counted.
   */
  async dropped(input: unknown): Promise<boolean> {
    const notice = GroupDropNotice.safeParse(input);
    const record = this.#deps.storage.readBatch();
    if (!notice.success || !record || notice.data.reason !== "stale") return false;
    const row = rowOfUid(record, notice.data.uid);
    if (row === undefined) return false;
    return this.lost(record, row, "stale", notice.data.policy_version);
  }

  /** Records row `row`'s group as lost, reopens the batch if it now falls short, and refills (unless holding). */
  async lost(
    record: BatchRecord,
    row: number,
    reason: LostReason,
    policyVersion: number | null,
  ): Promise<boolean> {
    if (record.tree !== null) return false;
    if (!this.#deps.refill.record(record, row, reason, policyVersion)) return false;
    if (this.#deps.refill.reopen()) await this.#deps.rearm();
    await this.#deps.fanOut.release();
    return true;
  }

  /**
   * A member of `slot`'s row ended STALE: its live siblings are cancelled (their group cannot be
   * trained), and the group, once judged, is lost as `cancelled` (via `judged`).
   */
  async memberStale(slot: RolloutSlot): Promise<void> {
    if (slot.parent_id) return;
    await this.#deps.signal.judgeRows(await this.#deps.fanOut.cancelRow(slot.row_index));
  }

  /** Called with each verdict the tracker records: a `cancelled` group is lost to staleness. */
  async judged(rowIndex: number, verdict: string): Promise<void> {
    const record = this.#deps.storage.readBatch();
    if (verdict !== "cancelled" || !record) return;
    await this.lost(record, rowIndex, "cancelled", null);
  }

  /**
   * Whether a `wait` batch still holds its new rollouts: it stops holding once the feed holds
   * none of its groups ready (the trainer pulled what was made), asked on the tracker's tick.
   */
  async holding(record: BatchRecord): Promise<boolean> {
    const { refill, feed } = this.#deps;
    if (refill.holdingSince() === null) return false;
    if (!feed) {
      refill.release();
      return false;
    }
    try {
      if ((await feed.readyGroups(record.batch_id)) > 0) return true;
    } catch (error) {
      console.error("stale hold: reading the feed's backlog failed", error);
      return true;
    }
    refill.release();
    return false;
  }
}
