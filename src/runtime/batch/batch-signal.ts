/**
 * @module A batch's side of its groups' signal: re-running a slot whose rollout failed for
 * infrastructure, judging each group once complete (the feed's rule,
 * src/training/group-verdict.ts), and cutting an over-sampled batch once `target_groups` groups
 * with signal are complete.
 */
import type { Clock, StoragePort } from "../../ports";
import { outcomeOf } from "../../schemas/member-outcome";
import type { ResultMessage } from "../../schemas/result-message";
import { groupVerdict, type GroupVerdict } from "../../training/group-verdict";
import { retrySlot, slotAt, type BatchRecord, type RolloutSlot } from "./batch-state";
import type { BatchStorage, FinishedMember, StoredVerdict } from "./batch-storage";
import type { FanOut } from "./fan-out";
import { MAX_MAX_CONCURRENT } from "../../schemas/batch";
import { slotGroup } from "./tree-slots";

/** What the signal logic needs from its tracker. */
export interface BatchSignalDeps {
  storage: BatchStorage;
  transactionSync: StoragePort["transactionSync"];
  fanOut: FanOut;
  now: Clock;
  /** Whether an over-sampled batch met its target (stale-refill.ts: lost groups do not count). */
  targetMet: (record: BatchRecord) => boolean;
  /** Told each row verdict as it is recorded (a `cancelled` group is lost to staleness: stale-groups.ts). */
  judged: (rowIndex: number, verdict: StoredVerdict) => Promise<void>;
}

function storedVerdict(verdict: GroupVerdict): StoredVerdict {
  return verdict.kind === "withhold" ? verdict.reason : verdict.kind;
}

/** Groups that reach the trainer: delivered whole, or with their valid members. */
export function groupsDelivered(verdicts: Map<StoredVerdict, number>): number {
  return (verdicts.get("deliver") ?? 0) + (verdicts.get("deliver_valid") ?? 0);
}

/** Re-runs, verdicts and the cut of one batch. Every decision is idempotent: results are delivered at least once. */
export class BatchSignal {
  readonly #deps: BatchSignalDeps;

  constructor(deps: BatchSignalDeps) {
    this.#deps = deps;
  }

  /** Acts on a result the tracker just recorded for `slot` (from its message or read back): re-runs the slot, or judges its group. */
  async afterResult(slot: RolloutSlot, message: Pick<ResultMessage, "superseded">): Promise<void> {
    if (message.superseded) return this.#rerun(slot);
    // A tree node's run is final: its children fork from it.
    await this.#deps.fanOut.branch(slot);
    await this.judgeSlot(slot);
  }

  /** Judges the group `slot` is a member of: its row's, or for a tree child its node's. */
  async judgeSlot(slot: RolloutSlot): Promise<void> {
    if (slot.parent_id) return this.#judgeNode(slot, slot.parent_id);
    await this.judgeRow(slot.row_index);
  }

  /** Judges a tree node's group (the children of one parent run) once all `width` current runs finished, once. */
  async #judgeNode(slot: RolloutSlot, parentId: string): Promise<void> {
    const { storage } = this.#deps;
    const record = storage.readBatch();
    if (!record?.tree) return;
    const members = storage.tree.finishedChildren(parentId);
    if (members.length < record.tree.width) return;
    // A child's place in its node's group is its last branch, not its root's sample.
    const placed = members.map((member) => ({
      ...member,
      sample_index: slotGroup(record, { ...slot, rollout_id: member.rollout_id }).sample_index,
    }));
    const verdict = groupVerdict(
      placed.map((member) => this.#verdictMember(record, member)),
      { signal_filter: record.filter, on_infra_failure: record.on_infra_failure },
    );
    storage.tree.recordVerdict(
      slotGroup(record, slot).uid,
      storedVerdict(verdict),
      this.#deps.now(),
    );
  }

  /**
   * Judges row `rowIndex`'s group if every slot's current run has finished, once; cuts the batch
   * when that made `target_groups` groups with signal.
   */
  async judgeRow(rowIndex: number): Promise<void> {
    const { storage } = this.#deps;
    const record = storage.readBatch();
    if (!record) return;
    const members = storage.finishedMembers(rowIndex);
    if (members.length < record.n) return;
    const verdict = groupVerdict(
      members.map((member) => this.#verdictMember(record, member)),
      { signal_filter: record.filter, on_infra_failure: record.on_infra_failure },
    );
    const stored = storedVerdict(verdict);
    if (!storage.recordVerdict(rowIndex, stored, this.#deps.now())) return;
    await this.#deps.judged(rowIndex, stored);
    if (this.#deps.targetMet(record)) await this.cut();
  }

  /**
   * The target is met: nothing more is released, what still runs is cancelled (its result is
   * `cut`, never trained), and the unreleased slots of a row released in part get `cut` stand-ins
   * so the feed closes its group. Idempotent (the alarm repeats the cancel for live rollouts).
   */
  async cut(): Promise<void> {
    const { storage } = this.#deps;
    const cut = this.#deps.transactionSync(() => {
      const record = storage.readBatch();
      if (!record || record.cut_at !== null || record.cancelled_at !== null) return null;
      const now = this.#deps.now();
      const updated: BatchRecord = { ...record, cut_at: now, updated_at: now };
      storage.writeBatch(updated);
      return updated;
    });
    if (!cut) return;
    // Slots are released in index order, so only the row holding next_index can be part-released.
    const partial: RolloutSlot[] = [];
    for (let index = cut.next_index; index < cut.total && index % cut.n !== 0; index += 1)
      partial.push(slotAt(cut, index));
    if (partial.length > 0) await this.#deps.fanOut.standInCut(cut, partial);
    await this.judgeRows(await this.#deps.fanOut.cancelLive(MAX_MAX_CONCURRENT));
  }

  /** Judges the groups of `slots` (rollouts a cancel just ended: their result messages may come later or never matter). */
  async judgeRows(slots: readonly RolloutSlot[]): Promise<void> {
    for (const slot of slots.filter((slot) => slot.parent_id)) await this.judgeSlot(slot);
    for (const row of new Set(
      slots.filter((slot) => !slot.parent_id).map((slot) => slot.row_index),
    ))
      await this.judgeRow(row);
  }

  /** The slot's next run, released in the place of the one that failed; a stopped batch gets a cut stand-in instead. */
  async #rerun(slot: RolloutSlot): Promise<void> {
    const { storage } = this.#deps;
    const next = retrySlot(slot, (slot.attempt ?? 0) + 1);
    const released = this.#deps.transactionSync(() => {
      const record = storage.readBatch();
      if (!record) return null;
      const stopped = record.cancelled_at !== null || record.cut_at !== null;
      storage.insertReleased([next], this.#deps.now());
      if (stopped)
        storage.recordOutcome(
          next.rollout_id,
          { status: "cancelled", termination_reason: "CANCELLED", reward: null, outcome: "cut" },
          this.#deps.now(),
        );
      return { record, stopped };
    });
    if (!released) return;
    if (released.stopped) return this.#deps.fanOut.standInCut(released.record, [next]);
    await this.#deps.fanOut.launch(released.record, [next]);
  }

  #verdictMember(record: BatchRecord, member: FinishedMember) {
    const { rollout_id, sample_index, attempt, termination_reason } = member;
    // A result read back from its session carries no metric: the reward is the metric `reward` names.
    const metric = member.metric ?? (record.filter?.metric === "reward" ? member.reward : null);
    return {
      rollout_id,
      sample_index,
      termination_reason,
      member_attempt: attempt,
      outcome: member.outcome ?? outcomeOf(termination_reason),
      metric,
    };
  }
}
