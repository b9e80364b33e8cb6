/** @module When a create (or a fork) under an existing rollout id is the same rollout again. */
import type { RolloutSpec } from "../../../schemas/rollout-api";
import type { SessionKernel } from "./session-kernel";
import type { CreateResult } from "./session-results";

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

/**
 * What a create or a fork answers when its id already holds a rollout: the same one again is a
 * no-op (`created: false`, its status now), any other a conflict with `conflictMessage`. Null when
 * the id is free and the caller goes on to create. One check, so create and fork stay idempotent
 * in the same way.
 */
export function repeatedCreate(
  kernel: Pick<SessionKernel, "spec" | "state">,
  spec: RolloutSpec,
  conflictMessage: string,
): CreateResult | null {
  const existing = kernel.spec;
  const state = kernel.state;
  if (!existing || !state) return null;
  if (!sameRollout(existing, spec))
    return { ok: false, reason: "conflict", message: conflictMessage };
  return { ok: true, created: false, rollout_id: spec.rollout_id, status: state.status };
}
