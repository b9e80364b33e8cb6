/** @module Dropping a complete group the trainer must not get, reported like a stale drop. */
import type { FeedCounterName } from "../../schemas/feed";
import type { FeedStorage, GroupRow } from "./feed-storage";
import type { GroupVerdict } from "./group-verdict";

const COUNTER_OF_REASON = {
  cut: "dropped_cut",
  infra_failure: "dropped_infra_failure",
  no_signal: "dropped_no_signal",
} as const satisfies Record<string, FeedCounterName>;

/**
 * Closes `group` (its members deleted, its uid remembered so late results stay out), counts it
 * and, for a batch's group, records why in `dropped_groups`, where pulls naming the batch, the
 * stats, the batch view and the verl manager find it (the manager answers its rows with masked
 * zero-reward placeholders: advantage 0, no fake signal).
 */
export function withholdGroup(
  storage: FeedStorage,
  group: GroupRow,
  verdict: Extract<GroupVerdict, { kind: "withhold" }>,
  now: number,
): void {
  storage.closeGroup(group.uid, now);
  storage.bump(group.training_mode, COUNTER_OF_REASON[verdict.reason]);
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
  const why =
    verdict.reason === "no_signal"
      ? { metric: verdict.metric, metric_std: verdict.std }
      : { failed_members: verdict.failed };
  storage.dropped.record({
    uid,
    batch_id,
    training_mode,
    reason: verdict.reason,
    group_size,
    arrived,
    max_staleness,
    policy_version_start,
    policy_version_end,
    policy_version: policy_version_end,
    dropped_at: now,
    ...why,
  });
}
