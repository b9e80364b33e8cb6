/**
 * @module How one finished rollout counts for its GRPO group, computed from its view alone: the
 * session publishes it on the result message, and a batch tracker that never got that message
 * reads the same fields back from the session (so a lost message cannot change a verdict).
 */
import type { RolloutView } from "../schemas/rollout-api";
import { outcomeOf } from "../schemas/member-outcome";
import type { ResultMessage } from "../schemas/result-message";
import type { RolloutGroup } from "../schemas/rollout-group";
import { metricOf } from "./member-metric";

/** The result message's signal fields. */
export type MemberSignal = Pick<
  ResultMessage,
  "outcome" | "member_attempt" | "superseded" | "metric" | "signal_filter" | "on_infra_failure"
>;

/**
 * How the rollout counts for its group: its outcome, which run of its slot it is, whether its slot
 * is re-run (an infrastructure failure of a batch's slot with retries left, or a run its batch
 * cancelled under KV pressure: the tracker creates the next attempt, the feed waits for it), and
 * the value of the group's filter metric.
 */
export function memberSignal(view: RolloutView, group: RolloutGroup): MemberSignal {
  const outcome = view.outcome ?? outcomeOf(view.termination_reason);
  return {
    outcome,
    member_attempt: group.attempt,
    // Requeued by its batch (cancelled to run again), or an infrastructure failure with retries left.
    superseded:
      view.superseded ||
      (outcome === "infra" && group.batch_id !== null && group.attempt < group.max_member_retries),
    metric: group.signal_filter ? metricOf(view, group.signal_filter.metric) : null,
    signal_filter: group.signal_filter,
    on_infra_failure: group.on_infra_failure,
  };
}
