/**
 * @module Stand-in results for batch slots whose rollout never ran: the slot's rollout id is held
 * by another rollout (`taken`), or the slot was never created because the batch stopped first
 * (`cut`: a cancel, or an over-sampled batch that met its target). No result would ever reach the
 * trainer feed for such a slot and its group would wait forever; the tracker announces this
 * stand-in in its place, and the feed withholds the group (an infrastructure failure, or cut).
 */
import { RESULT_MESSAGE_SCHEMA_VERSION, ResultMessage } from "../../schemas/result-message";
import { rolloutAtifKey, rolloutRecordKey } from "../../sink/publication/r2-keys";
import type { BatchRecord, RolloutSlot } from "./batch-state";
import { slotGroup } from "./tree-slots";

/**
 * Suffixes of a stand-in's rollout id. `#` is outside the rollout-id charset, so a stand-in never
 * collides with a real rollout in the feed's dedupe memory (the rollout that took the id may be
 * fed itself).
 */
export const TAKEN_SLOT_SUFFIX = "#id-taken";
const CUT_SLOT_SUFFIX = "#cut";

/** Why a slot gets a stand-in. */
export type StandInKind = "taken" | "cut";

/**
 * The result message standing in for `slot`: no samples, R2 keys that hold nothing (a pull with
 * `inline` never reads a member without samples); `taken` is a failed member (infrastructure),
 * `cut` a cancelled one.
 */
export function standInResult(
  record: BatchRecord,
  slot: RolloutSlot,
  kind: StandInKind,
  now: number,
): ResultMessage {
  const rolloutId = `${slot.rollout_id}${kind === "taken" ? TAKEN_SLOT_SUFFIX : CUT_SLOT_SUFFIX}`;
  return ResultMessage.parse({
    schema_version: RESULT_MESSAGE_SCHEMA_VERSION,
    rollout_id: rolloutId,
    status: kind === "taken" ? "failed" : "cancelled",
    termination_reason: kind === "taken" ? null : "CANCELLED",
    reward: null,
    ...slotGroup(record, slot),
    batch_id: record.batch_id,
    training_mode: record.training_mode,
    data_manager: record.data_manager,
    policy_version_start: 0,
    policy_version_end: 0,
    key: rolloutRecordKey(rolloutId),
    atif_key: rolloutAtifKey(rolloutId),
    samples: 0,
    finished_at: now,
    outcome: kind === "taken" ? "infra" : "cut",
    member_attempt: slot.attempt ?? 0,
    signal_filter: record.filter,
    on_infra_failure: record.on_infra_failure,
  });
}

/** The stand-in for a slot whose rollout id another rollout holds (see `standInResult`). */
export function takenSlotResult(
  record: BatchRecord,
  slot: RolloutSlot,
  now: number,
): ResultMessage {
  return standInResult(record, slot, "taken", now);
}

/** The slot's rollout id if `rolloutId` is a stand-in's, else undefined. */
export function slotOfStandIn(rolloutId: string): string | undefined {
  for (const suffix of [TAKEN_SLOT_SUFFIX, CUT_SLOT_SUFFIX])
    if (rolloutId.endsWith(suffix)) return rolloutId.slice(0, -suffix.length);
  return undefined;
}
