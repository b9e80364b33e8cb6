/**
 * @module The stand-in result for a batch slot whose rollout id another rollout already holds. The
 * slot's rollout is never created, so no result would ever reach the trainer feed and its group
 * would wait forever; the tracker announces this stand-in in its place, as a failed member with no
 * samples, and the group closes like any group with a failed member.
 */
import { RESULT_MESSAGE_SCHEMA_VERSION, ResultMessage } from "../../schemas/result-message";
import { rolloutAtifKey, rolloutRecordKey } from "../../sink/r2-keys";
import { groupUid, type BatchRecord, type RolloutSlot } from "./batch-state";

/**
 * Suffix of a stand-in's rollout id. `#` is outside the rollout-id charset, so a stand-in never
 * collides with a real rollout in the feed's dedupe memory (the rollout that took the id may be
 * fed itself).
 */
export const TAKEN_SLOT_SUFFIX = "#id-taken";

/**
 * The result message standing in for `slot`: status failed, no samples (the trainer masks it),
 * and R2 keys that hold nothing (a pull with `inline` never reads a member without samples).
 */
export function takenSlotResult(record: BatchRecord, slot: RolloutSlot, now: number): ResultMessage {
  const rolloutId = `${slot.rollout_id}${TAKEN_SLOT_SUFFIX}`;
  return ResultMessage.parse({
    schema_version: RESULT_MESSAGE_SCHEMA_VERSION,
    rollout_id: rolloutId,
    status: "failed",
    termination_reason: null,
    reward: null,
    uid: groupUid(record.batch_id, slot.row_index),
    sample_index: slot.sample_index,
    group_size: record.n,
    batch_id: record.batch_id,
    training_mode: record.training_mode,
    data_manager: record.data_manager,
    policy_version_start: 0,
    policy_version_end: 0,
    key: rolloutRecordKey(rolloutId),
    atif_key: rolloutAtifKey(rolloutId),
    samples: 0,
    finished_at: now,
  });
}

/** The slot's rollout id if `rolloutId` is a stand-in's, else undefined. */
export function slotOfStandIn(rolloutId: string): string | undefined {
  return rolloutId.endsWith(TAKEN_SLOT_SUFFIX) ? rolloutId.slice(0, -TAKEN_SLOT_SUFFIX.length) : undefined;
}
