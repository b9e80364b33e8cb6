/** @module When a create (or a fork) under an existing rollout id is the same rollout again. */
import type { RolloutSpec } from "../../schemas/rollout-api";

/**
 * Whether `incoming` is the rollout `existing` already is: the same kind, agent, task, config,
 * group (which decides where results go) and place in a tree. Creation time is not compared: a
 * retried request makes a new one.
 */
export function sameRollout(existing: RolloutSpec, incoming: RolloutSpec): boolean {
  const key = (spec: RolloutSpec) =>
    JSON.stringify([spec.kind, spec.agent, spec.task, spec.config, spec.group, spec.tree ?? null]);
  return key(existing) === key(incoming);
}
