/** @module Batch progress added up over the chunks of one submission, with rate and ETA. */
import type { BatchProgress } from "../../src/schemas/batch";

/** Counts of one or more batches, summed so the reward mean can be combined exactly. */
export interface ProgressTally {
  rollouts: number;
  succeeded: number;
  failed: number;
  cancelled: number;
  running: number;
  queued: number;
  not_released: number;
  reward_sum: number;
  reward_count: number;
  termination_reasons: Record<string, number>;
  /** Infrastructure failures whose slot was re-run. */
  retried: number;
  /**
   * Complete groups: delivered with signal, filtered (no signal), withheld (infrastructure), cut;
   * lost to staleness (stale: dropped when pulled; cancelled: ended while they ran) and refilled.
   */
  groups: {
    target: number | null;
    delivered: number;
    filtered: number;
    withheld: number;
    cut: number;
    stale: number;
    cancelled: number;
    refilled: number;
  };
}

/** A tally of nothing yet: `rollouts` not started. */
export function emptyTally(rollouts = 0): ProgressTally {
  return {
    rollouts,
    succeeded: 0,
    failed: 0,
    cancelled: 0,
    running: 0,
    queued: 0,
    not_released: rollouts,
    reward_sum: 0,
    reward_count: 0,
    termination_reasons: {},
    retried: 0,
    groups: {
      target: null,
      delivered: 0,
      filtered: 0,
      withheld: 0,
      cut: 0,
      stale: 0,
      cancelled: 0,
      refilled: 0,
    },
  };
}

/** One batch's progress as a tally. */
export function tallyOf(progress: BatchProgress): ProgressTally {
  const { counts, reward } = progress;
  const reasons: Record<string, number> = {};
  for (const [reason, count] of Object.entries(progress.termination_reasons))
    if (count) reasons[reason] = count;
  return {
    rollouts: progress.rollouts,
    succeeded: counts.succeeded,
    failed: counts.failed,
    cancelled: counts.cancelled,
    running: counts.running,
    queued: counts.queued,
    not_released: counts.not_released,
    reward_sum: (reward.mean ?? 0) * reward.count,
    reward_count: reward.count,
    termination_reasons: reasons,
    retried: progress.retried,
    groups: {
      target: progress.groups.target,
      delivered: progress.groups.delivered,
      filtered: progress.groups.filtered,
      withheld: progress.groups.withheld,
      cut: progress.groups.cut,
      stale: progress.refill.stale,
      cancelled: progress.refill.cancelled,
      refilled: progress.refill.refilled,
    },
  };
}

/** The sum of tallies (chunks of one submission). */
export function addTallies(...tallies: ProgressTally[]): ProgressTally {
  const total = emptyTally(0);
  for (const t of tallies) {
    total.rollouts += t.rollouts;
    total.succeeded += t.succeeded;
    total.failed += t.failed;
    total.cancelled += t.cancelled;
    total.running += t.running;
    total.queued += t.queued;
    total.not_released += t.not_released;
    total.reward_sum += t.reward_sum;
    total.reward_count += t.reward_count;
    total.retried += t.retried;
    if (t.groups.target !== null)
      total.groups.target = (total.groups.target ?? 0) + t.groups.target;
    for (const key of [
      "delivered",
      "filtered",
      "withheld",
      "cut",
      "stale",
      "cancelled",
      "refilled",
    ] as const)
      total.groups[key] += t.groups[key];
    for (const [reason, count] of Object.entries(t.termination_reasons))
      total.termination_reasons[reason] = (total.termination_reasons[reason] ?? 0) + count;
  }
  return total;
}

/** Rollouts that ended, however they ended. */
export function finishedOf(t: ProgressTally): number {
  return t.succeeded + t.failed + t.cancelled;
}

/** Mean reward over finished rollouts with a reward, or null when none has one. */
export function rewardMean(t: ProgressTally): number | null {
  return t.reward_count === 0 ? null : t.reward_sum / t.reward_count;
}

/**
 * Rollouts per second since the watch began and the time left at that rate. Rollouts that had
 * already finished when the watch began (a resumed batch) do not count toward the rate.
 */
export function rateAndEta(
  finished: number,
  finishedAtStart: number,
  total: number,
  elapsedMs: number,
): { rate: number; etaMs: number | null } {
  const progressed = Math.max(0, finished - finishedAtStart);
  const rate = elapsedMs > 0 ? (progressed * 1000) / elapsedMs : 0;
  const remaining = Math.max(0, total - finished);
  if (remaining === 0) return { rate, etaMs: 0 };
  return { rate, etaMs: rate > 0 ? (remaining / rate) * 1000 : null };
}
