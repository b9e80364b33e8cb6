/**
 * @module What a complete GRPO group becomes: delivered, delivered with only its valid members
 * flagged, or withheld (cut, infrastructure failure, no signal). The feed applies it when a
 * group completes; the batch tracker applies the same rule to count the groups with signal an
 * over-sampled batch still needs. Here, beside the member signal it judges, so that the two
 * share it without either importing the other.
 */
import type { InfraFailurePolicy, MemberOutcome, SignalFilter } from "../schemas/member-outcome";
import type { TerminationReason } from "../schemas/termination";

/** One member as the verdict sees it. */
export interface VerdictMember {
  rollout_id: string;
  sample_index: number;
  termination_reason: TerminationReason | null;
  outcome: MemberOutcome;
  member_attempt: number;
  /** The filter metric's value; null counts as 0, the score verl would give it. */
  metric: number | null;
}

/** The group's rules, as its batch set them. */
export interface GroupRules {
  signal_filter: SignalFilter | null;
  on_infra_failure: InfraFailurePolicy;
}

/** A member that is not a policy outcome, as reported in a dropped group. */
export type FailedMember = Pick<
  VerdictMember,
  "rollout_id" | "sample_index" | "termination_reason" | "outcome" | "member_attempt"
>;

/** What to do with a complete group. */
export type GroupVerdict =
  | { kind: "deliver" }
  | { kind: "deliver_valid"; valid: number[]; failed: FailedMember[] }
  | { kind: "withhold"; reason: "cut" | "cancelled" | "infra_failure"; failed: FailedMember[] }
  | { kind: "withhold"; reason: "no_signal"; metric: string; std: number };

/** Population standard deviation (what verl's GRPO divides by is the sample std; either is 0 exactly when all are equal). */
export function populationStd(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
  return Math.sqrt(values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / values.length);
}

function failedOf(members: readonly VerdictMember[]): FailedMember[] {
  return members.map(
    ({ rollout_id, sample_index, termination_reason, outcome, member_attempt }) => ({
      rollout_id,
      sample_index,
      termination_reason,
      outcome,
      member_attempt,
    }),
  );
}

/**
 * The verdict over a complete group's members. verl's GRPO, RLOO and Dr.GRPO estimators take a
 * group's statistics over every row of a uid (core_algos.py:267-327), so a group holding an
 * infrastructure failure cannot give its valid members their true advantage: withheld whole,
 * unless the batch opted into delivering the valid members (at least 2: verl gives a one-row
 * group mean 0 and std 1) for an estimator that skips invalid rows. A cut member withholds its
 * group (the group is the surplus, or was cancelled); a member ended STALE while it ran makes
 * the group `cancelled` (its siblings are cut with it: the group's oldest token decides its
 * staleness, so none of them could be trained). The filter applies to valid members only.
 */
export function groupVerdict(members: readonly VerdictMember[], rules: GroupRules): GroupVerdict {
  const cut = members.filter((member) => member.outcome === "cut");
  if (cut.length > 0)
    return {
      kind: "withhold",
      reason: members.some((member) => member.termination_reason === "STALE") ? "cancelled" : "cut",
      failed: failedOf(members.filter((member) => member.outcome !== "policy")),
    };
  const invalid = members.filter((member) => member.outcome === "infra");
  const valid = members.filter((member) => member.outcome === "policy");
  if (invalid.length > 0 && (rules.on_infra_failure !== "deliver_valid" || valid.length < 2))
    return { kind: "withhold", reason: "infra_failure", failed: failedOf(invalid) };
  // As DAPO keeps a one-sample group (verl-recipe dapo_ray_trainer.py: `std > 0 or len(...) == 1`): it has no spread to lose.
  if (rules.signal_filter && valid.length > 1) {
    const std = populationStd(valid.map((member) => member.metric ?? 0));
    if (std <= rules.signal_filter.min_std)
      return { kind: "withhold", reason: "no_signal", metric: rules.signal_filter.metric, std };
  }
  if (invalid.length > 0)
    return {
      kind: "deliver_valid",
      valid: valid.map((member) => member.sample_index),
      failed: failedOf(invalid),
    };
  return { kind: "deliver" };
}
