/** @module The value of a group's filter metric for one finished rollout (DAPO's dynamic sampling). */
import type { RolloutView } from "../schemas/rollout-api";

/**
 * `metric` of `view`: `"reward"` is the rollout's reward; any other name is the reward dimension
 * the agent emitted under it, from the last reward span that has it: a span named `metric`
 * (its primary value) or a record of named rewards with a `metric` entry
 * (`emitReward({acc: 1, brevity: 0.4})`). Null when the rollout has no such value.
 */
export function metricOf(
  view: Pick<RolloutView, "reward" | "spans">,
  metric: string,
): number | null {
  if (metric === "reward") return view.reward;
  for (let i = view.spans.length - 1; i >= 0; i -= 1) {
    const span = view.spans[i]!;
    if (span.kind !== "reward") continue;
    const value = span.value;
    if (
      typeof value === "object" &&
      value !== null &&
      !Array.isArray(value) &&
      typeof value[metric] === "number"
    )
      return value[metric];
    if (span.name === metric && typeof value === "number") return value;
  }
  return null;
}
