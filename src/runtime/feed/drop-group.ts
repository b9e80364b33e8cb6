/**
 * @module Dropping a complete group the trainer must not get: too stale at pull time, or
 * withheld by its verdict when it completes (cut, infrastructure failure, no signal). One routine
 * for every reason, so each drop closes, counts and reports the group the same way.
 */
import type { DroppedGroup, FeedCounterName } from "../../schemas/feed";
import type { FeedStorage, GroupRow } from "./feed-storage";
import type { GroupVerdict } from "../../training/group-verdict";

/**
 * Why a group is dropped: `stale` at the pulling trainer's `policy_version`, or the verdict that
 * withheld it.
 */
export type GroupDrop =
  { reason: "stale"; policy_version: number } | Extract<GroupVerdict, { kind: "withhold" }>;

const COUNTER_OF_REASON = {
  stale: "dropped_stale",
  cut: "dropped_cut",
  cancelled: "dropped_cancelled",
  infra_failure: "dropped_infra_failure",
  no_signal: "dropped_no_signal",
} as const satisfies Record<GroupDrop["reason"], FeedCounterName>;

/** What a drop adds to the batch's record: the version it is judged at, and the evidence. */
function details(
  group: GroupRow,
  drop: GroupDrop,
): Pick<DroppedGroup, "policy_version" | "failed_members" | "metric" | "metric_std"> {
  if (drop.reason === "stale") return { policy_version: drop.policy_version };
  // A withheld group is judged when it completes, at the newest version its members saw.
  const policy_version = group.policy_version_end;
  return drop.reason === "no_signal"
    ? { policy_version, metric: drop.metric, metric_std: drop.std }
    : { policy_version, failed_members: drop.failed };
}

/**
 * Closes `group` (its members deleted, its uid remembered so late results stay out), counts it
 * under its reason's `dropped_*` counter and, for a batch's group, records why in
 * `dropped_groups`, where pulls naming the batch, the stats, the batch view and the verl manager
 * find it (the manager answers its rows with masked zero-reward placeholders: advantage 0, no
 * fake signal).
 */
export function dropGroup(
  storage: FeedStorage,
  group: GroupRow,
  drop: GroupDrop,
  now: number,
): void {
  storage.closeGroup(group.uid, now);
  storage.bump(group.training_mode, COUNTER_OF_REASON[drop.reason]);
  if (group.batch_id === null) return;
  const {
    uid,
    batch_id,
    training_mode,
    group_size,
    arrived,
    max_staleness,
    policy_version_start,
    policy_version_end,
  } = group;
  storage.dropped.record({
    uid,
    batch_id,
    training_mode,
    reason: drop.reason,
    group_size,
    arrived,
    max_staleness,
    policy_version_start,
    policy_version_end,
    dropped_at: now,
    ...details(group, drop),
  });
}
