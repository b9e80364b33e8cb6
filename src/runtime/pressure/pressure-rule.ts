/**
 * @module The control rule: from one sample of every replica's KV pressure, the next budget of
 * rollouts in flight across all batches. Additive increase, multiplicative decrease, with a
 * hysteresis band between the low and high water marks (docs/decisions/0019): preemption cuts
 * the budget multiplicatively (hard), usage at the high-water mark trims it a step (soft), usage
 * below the low-water mark grows it a step, and in between it holds.
 *
 * Why AIMD and not a proportional rule (budget × target / usage): usage lags the budget. A
 * rollout's context grows mid-episode and a cut takes effect only as rollouts end, so a proportional
 * step overshoots both ways on a cache that moves in steps of whole rollouts; a multiplicative cut
 * backs off fast (preemption is a cliff: a preempted sequence recomputes its whole context), an
 * additive climb probes slowly, and among batches sharing the budget AIMD converges to fair
 * shares. Growth happens only while the budget binds (the batches fill it), so an idle budget
 * never climbs blind.
 */
import type { PressureConfig, ReplicaPressure } from "../../schemas/pressure";

/** A cut keeps this fraction of the budget (TCP CUBIC's β: gentler than halving, since the rollouts in flight run on to their end anyway). */
export const DECREASE_FACTOR = 0.7;
/** An increase adds this fraction of the ceiling (at least 1): from the floor to the ceiling in about 20 samples. */
export const INCREASE_FRACTION = 0.05;
/** Samples after a cut before the next cut: usage shows a cut only once rollouts have ended. */
export const COOLDOWN_SAMPLES = 2;
/** The budget binds (may grow) when the batches keep at least this fraction of it in flight. */
export const BINDING_FRACTION = 0.9;

/** What the controller keeps between samples. */
export interface PressureState {
  /** Rollouts in flight allowed across all batches; null until the first sample with a batch. */
  limit: number | null;
  overload_streak: number;
  /** Samples left before another cut may happen. */
  cooldown: number;
  requeue_epoch: number;
  decision: "increase" | "decrease" | "hold" | "blind" | null;
  /** Each replica's last `vllm:num_preemptions_total`, to see preemptions since the last sample. */
  preemptions: Record<string, number>;
}

/** The state before any sample. */
export const INITIAL_PRESSURE_STATE: PressureState = {
  limit: null,
  overload_streak: 0,
  cooldown: 0,
  requeue_epoch: 0,
  decision: null,
  preemptions: {},
};

/** One sample's input. */
export interface PressureSample {
  /** The replicas that answered (an empty list: none did). */
  replicas: readonly ReplicaPressure[];
  /** Rollouts the batches reported in flight. */
  inFlight: number;
  /** The most the budget may be: `max_concurrency`, or the batches' `max_concurrent` summed. */
  ceiling: number;
}

/**
 * How the sample reads. `overload`: a replica preempted since the last sample (a preempted
 * sequence recomputes its whole context: the cliff). `high`: KV usage at or above the high-water
 * mark (the cache is full and contexts are still growing: trim before the cliff). `cool`: usage at
 * or below the low-water mark and nothing waiting (room to grow). `band`: in between (hold).
 */
function classify(
  replicas: readonly ReplicaPressure[],
  previous: Record<string, number>,
  config: Pick<PressureConfig, "high_water" | "low_water">,
): "overload" | "high" | "band" | "cool" {
  // A counter below its last value is a restarted server, not negative preemptions.
  if (replicas.some((r) => r.preemptions > (previous[r.url] ?? r.preemptions))) return "overload";
  const usage = Math.max(...replicas.map((r) => r.kv_usage));
  if (usage >= config.high_water) return "high";
  const waiting = replicas.some((r) => r.waiting > 0);
  return usage <= config.low_water && !waiting ? "cool" : "band";
}

/** The state after `sample`. */
export function nextPressureState(
  state: PressureState,
  config: PressureConfig,
  sample: PressureSample,
): PressureState {
  const ceiling = Math.max(config.min_concurrency, sample.ceiling);
  const limit = Math.min(state.limit ?? ceiling, ceiling);
  const step = Math.max(1, Math.round(INCREASE_FRACTION * ceiling));
  const cooldown = Math.max(0, state.cooldown - 1);
  if (sample.replicas.length === 0) return { ...state, limit, cooldown, decision: "blind" }; // never move on no data
  const preemptions = Object.fromEntries(sample.replicas.map((r) => [r.url, r.preemptions]));
  const kind = classify(sample.replicas, state.preemptions, config);
  // Cut from what is in flight when the batches hold less than the limit.
  const base = Math.min(limit, Math.max(sample.inFlight, config.min_concurrency));
  // Still draining to the last cut (more in flight than the limit): no further cut or trim, which
  // would compound before the first showed (rollouts leave only as they end); sustained overload
  // meanwhile requeues the surplus instead.
  const draining = sample.inFlight > limit;
  const hold = { ...state, limit, cooldown, decision: "hold" as const, preemptions };
  if (kind === "overload") {
    const streak = state.overload_streak + 1;
    const sustained = streak >= config.overload_samples;
    const cut = cooldown === 0 && !draining;
    return {
      ...hold,
      limit: cut ? Math.max(config.min_concurrency, Math.floor(base * DECREASE_FACTOR)) : limit,
      overload_streak: sustained ? 0 : streak,
      cooldown: cut ? COOLDOWN_SAMPLES : cooldown,
      requeue_epoch: state.requeue_epoch + (sustained ? 1 : 0),
      decision: cut ? "decrease" : "hold",
    };
  }
  if (kind === "high" && !draining)
    // Soft: a step down per sample and no work lost; rollouts that end drain the surplus.
    return {
      ...hold,
      limit: Math.max(config.min_concurrency, Math.min(limit, base - step)),
      overload_streak: 0,
      decision: "decrease",
    };
  const grow = kind === "cool" && sample.inFlight >= BINDING_FRACTION * limit && limit < ceiling;
  if (!grow) return { ...hold, overload_streak: 0 };
  return {
    ...hold,
    limit: Math.min(ceiling, limit + step),
    overload_streak: 0,
    decision: "increase",
  };
}

/**
 * Each batch's share of `limit`, in proportion to its `max_concurrent` (a batch that asked for
 * twice as many rollouts gets twice the share), never above its own `max_concurrent` and never
 * below 1 (no batch starves; with more batches than the limit the sum may exceed it by the rounding).
 */
export function sharesOf(
  limit: number,
  batches: ReadonlyArray<{ batch_id: string; max_concurrent: number }>,
): Map<string, number> {
  const total = batches.reduce((sum, b) => sum + b.max_concurrent, 0);
  return new Map(
    batches.map((b) => [
      b.batch_id,
      Math.min(b.max_concurrent, Math.max(1, Math.floor((limit * b.max_concurrent) / total))),
    ]),
  );
}
