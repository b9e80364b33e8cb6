/**
 * @module Taking one finished rollout into its group: the result message checked, then held as
 * a member until the group is complete, when its verdict makes it ready or withholds it.
 */
import { outcomeOf } from "../../schemas/member-outcome";
import { ResultMessage, resultOutcome } from "../../schemas/result-message";
import type { FeedMember } from "../../schemas/feed";
import { TERMINAL_STATUSES } from "../../schemas/termination";
import type { ResolvedTrainingMode, TrainingModeRegistry } from "../../training/training-modes";
import { issuesOf, type IngestResult } from "./feed-results";
import { dropGroup } from "./drop-group";
import { tallyGeneration } from "./feed-stats";
import type { FeedStorage, GroupRow } from "./feed-storage";
import { groupVerdict, type VerdictMember } from "../../training/group-verdict";

/** A result message that may be held: valid, terminal, in range, of a known training mode. */
export type CheckedResult = { ok: true; message: ResultMessage; mode: ResolvedTrainingMode };

function verdictMember(member: FeedMember): VerdictMember {
  const { rollout_id, sample_index, termination_reason } = member;
  return {
    rollout_id,
    sample_index,
    termination_reason,
    outcome: member.outcome ?? outcomeOf(termination_reason),
    member_attempt: member.member_attempt ?? 0,
    metric: member.metric !== undefined ? member.metric : member.reward,
  };
}

/**
 * The group's policy versions once `member` joins. Only members with training samples count: a
 * member that failed before its first model call publishes version 0, and taking the minimum over
 * it would make the whole group look stale after any weight sync and drop its good samples. Until
 * a member with samples arrives, the group carries the versions of whatever arrived (with no
 * samples it is never dropped as stale; see `FeedCore`'s stale drop).
 */
function groupVersions(
  group: GroupRow,
  member: { samples: number; policy_version_start: number; policy_version_end: number },
): Pick<GroupRow, "policy_version_start" | "policy_version_end"> {
  if (member.samples === 0)
    return {
      policy_version_start: group.policy_version_start,
      policy_version_end: group.policy_version_end,
    };
  if (group.sample_count === 0)
    return {
      policy_version_start: member.policy_version_start,
      policy_version_end: member.policy_version_end,
    };
  return {
    policy_version_start: Math.min(group.policy_version_start, member.policy_version_start),
    policy_version_end: Math.max(group.policy_version_end, member.policy_version_end),
  };
}

/** Checks `message` as a result the feed can hold, naming the field that is wrong. */
export function checkResult(
  message: unknown,
  modes: TrainingModeRegistry,
): CheckedResult | Extract<IngestResult, { ok: false }> {
  const parsed = ResultMessage.safeParse(message);
  if (!parsed.success) return { ok: false, reason: "invalid", errors: issuesOf(parsed.error) };
  const msg = parsed.data;
  if (!TERMINAL_STATUSES.has(msg.status))
    return {
      ok: false,
      reason: "invalid",
      errors: [{ path: "status", message: "status must be succeeded, failed or cancelled" }],
    };
  if (msg.sample_index >= msg.group_size)
    return {
      ok: false,
      reason: "invalid",
      errors: [{ path: "sample_index", message: "sample_index must be < group_size" }],
    };
  const mode = modes.get(msg.training_mode);
  if (!mode)
    return {
      ok: false,
      reason: "unknown_training_mode",
      errors: [
        {
          path: "training_mode",
          message: `unknown training mode "${msg.training_mode}"; known modes: ${modes.describeNames()}`,
        },
      ],
    };
  return { ok: true, message: msg, mode };
}

/**
 * Holds `msg` in its group (inside the caller's transaction): a duplicate, a superseded run or a
 * late arrival is only counted; the member that completes the group has the group judged.
 */
export function holdResult(
  storage: FeedStorage,
  msg: ResultMessage,
  mode: ResolvedTrainingMode,
  now: number,
): IngestResult {
  if (storage.isSeen(msg.rollout_id)) {
    storage.bump(mode.name, "duplicates");
    return { ok: true, outcome: "duplicate", uid: msg.uid };
  }
  const group = storage.getGroup(msg.uid);
  if (group && (group.group_size !== msg.group_size || group.training_mode !== msg.training_mode)) {
    const message = `group ${msg.uid} is ${group.training_mode} with group_size ${group.group_size}; this rollout says ${msg.training_mode} with ${msg.group_size}`;
    return { ok: false, reason: "group_mismatch", errors: [{ path: "uid", message }] };
  }
  storage.markSeen(msg.rollout_id, now);
  tallyGeneration(storage, mode.name, msg.generation);
  // An infrastructure failure whose slot is re-run is never a member: the re-run takes its place.
  // Remembered as seen, so its session's delivery check stops re-publishing it.
  if (msg.superseded) {
    storage.bump(mode.name, "retried");
    return { ok: true, outcome: "superseded", uid: msg.uid };
  }
  if (
    storage.isClosed(msg.uid) ||
    (group && group.state !== "pending") ||
    storage.hasMember(msg.uid, msg.sample_index)
  ) {
    storage.bump(mode.name, "late");
    return { ok: true, outcome: "late", uid: msg.uid };
  }
  const {
    rollout_id,
    sample_index,
    status,
    termination_reason,
    reward,
    policy_version_start,
    policy_version_end,
    key,
    samples,
    member_attempt,
    metric,
  } = msg;
  const outcome = resultOutcome(msg);
  storage.insertMember(msg.uid, {
    rollout_id,
    sample_index,
    status,
    termination_reason,
    reward,
    policy_version_start,
    policy_version_end,
    key,
    samples,
    outcome,
    member_attempt,
    ...(msg.signal_filter ? { metric } : {}),
  });
  const base: GroupRow = group ?? {
    uid: msg.uid,
    training_mode: mode.name,
    batch_id: msg.batch_id,
    max_staleness: mode.max_staleness,
    group_size: msg.group_size,
    state: "pending",
    partial: false,
    created_at: now,
    ready_at: null,
    lease_id: null,
    deliveries: 0,
    policy_version_start,
    policy_version_end,
    sample_count: 0,
    arrived: 0,
  };
  const arrived = base.arrived + 1;
  const complete = arrived >= base.group_size;
  const grown: GroupRow = {
    ...base,
    arrived,
    sample_count: base.sample_count + samples,
    ...groupVersions(base, { samples, policy_version_start, policy_version_end }),
  };
  storage.bump(mode.name, "ingested");
  if (!complete) {
    storage.writeGroup(grown);
    return { ok: true, outcome: "held", uid: msg.uid, arrived, group_size: base.group_size };
  }
  const verdict = groupVerdict(storage.members(msg.uid).map(verdictMember), msg);
  if (verdict.kind === "withhold") {
    dropGroup(storage, grown, verdict, now);
    return {
      ok: true,
      outcome: "withheld",
      uid: msg.uid,
      reason: verdict.reason,
      arrived,
      group_size: base.group_size,
    };
  }
  if (verdict.kind === "deliver_valid") storage.bump(mode.name, "delivered_partial");
  storage.writeGroup({
    ...grown,
    state: "ready",
    ready_at: now,
    partial: grown.partial || verdict.kind === "deliver_valid",
  });
  return { ok: true, outcome: "completed", uid: msg.uid, arrived, group_size: base.group_size };
}
