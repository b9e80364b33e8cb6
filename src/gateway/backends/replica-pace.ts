/**
 * @module How much slower each replica's recent calls were than a typical replica's, as this
 * isolate saw them: the signal that keeps new rollouts (and so whole GRPO groups) off a replica
 * that would make their group wait (docs/scale.md, "Replica routing").
 */
import { CALL_TIME_HALF_LIFE_MS, type ReplicaState } from "./replica-state";

/**
 * Each replica's pace: its recent call time over the typical healthy replica's (the lower median
 * of their recent times), ≥ 1. The median, not the fastest: call time grows with a replica's
 * load, so a replica that happens to be nearly idle is fast, and measured against it every busy
 * replica looked slow; routing then sent every rollout to the idle one (bench:routing, eighth
 * pass: 72 calls on one replica, group p90 1.04x hash's). Against the median at most half the
 * replicas can look slow. What sets a replica apart fades with the age of its last call
 * (CALL_TIME_HALF_LIFE_MS), so a replica no call went to lately drifts back to 1 and is tried
 * again; a replica with no calls yet is 1.
 */
export function replicaPaces(
  replicas: readonly ReplicaState[],
  now: number,
): (replica: ReplicaState) => number {
  const times: number[] = [];
  for (const replica of replicas) {
    const recent = replica.healthy ? replica.recentCallTime() : null;
    if (recent && recent.ms > 0) times.push(recent.ms);
  }
  times.sort((a, b) => a - b);
  const typical = times.length > 0 ? times[Math.floor((times.length - 1) / 2)]! : undefined;
  return (replica) => {
    const recent = replica.recentCallTime();
    if (!recent || typical === undefined) return 1;
    const fade = 0.5 ** (Math.max(0, now - recent.endedAt) / CALL_TIME_HALF_LIFE_MS);
    return 1 + Math.max(0, recent.ms / typical - 1) * fade;
  };
}
