/**
 * @module How much slower each replica's recent calls were than the fastest replica's, as this
 * isolate saw them: the signal that keeps new rollouts (and so whole GRPO groups) off a replica
 * that would make their group wait (docs/scale.md, "Replica routing").
 */
import { CALL_TIME_HALF_LIFE_MS, type ReplicaState } from "./replica-state";

/**
 * Each replica's pace: its recent call time over the fastest healthy replica's, ≥ 1. What sets a
 * replica apart fades with the age of its last call (CALL_TIME_HALF_LIFE_MS), so a replica no
 * call went to lately drifts back to 1 and is tried again; a replica with no calls yet is 1.
 */
export function replicaPaces(
  replicas: readonly ReplicaState[],
  now: number,
): (replica: ReplicaState) => number {
  let fastest = Number.POSITIVE_INFINITY;
  for (const replica of replicas) {
    const recent = replica.healthy ? replica.recentCallTime() : null;
    if (recent && recent.ms > 0) fastest = Math.min(fastest, recent.ms);
  }
  return (replica) => {
    const recent = replica.recentCallTime();
    if (!recent || !Number.isFinite(fastest)) return 1;
    const fade = 0.5 ** (Math.max(0, now - recent.endedAt) / CALL_TIME_HALF_LIFE_MS);
    return 1 + Math.max(0, recent.ms / fastest - 1) * fade;
  };
}
