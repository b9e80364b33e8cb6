/**
 * @module The split guard's rule: a candidate version leaves the split when its mean reward is
 * below the stable version's with confidence, i.e. the upper end of the (Welch, normal) confidence
 * interval of `candidate − stable` is below 0. Off by default; the control object applies it after
 * scored sessions are reported and logs every action it takes (src/runtime/online/).
 */
import type { GuardConfig, SplitWeights, VersionOutcomes } from "../schemas/online";

/** One version's reward summary, with its mean and the confidence interval of the mean. */
export interface VersionReward {
  version: string;
  sessions: number;
  mean: number | null;
  ci: [number, number] | null;
}

/** A candidate the guard takes out of the split, and the evidence. */
export interface GuardAction {
  action: "remove";
  version: string;
  stable: string;
  candidate_mean: number;
  stable_mean: number;
  /** The confidence interval of `candidate − stable` (its upper end is below 0). */
  difference_ci: [number, number];
  weights_before: SplitWeights;
  weights_after: SplitWeights;
}

function moments(o: VersionOutcomes): { mean: number; variance: number } {
  const mean = o.sum / o.sessions;
  // Sample variance; 0 for one session (the rule needs min_sessions of each anyway).
  const variance =
    o.sessions > 1 ? Math.max(0, (o.sum_squares - o.sessions * mean * mean) / (o.sessions - 1)) : 0;
  return { mean, variance };
}

/** Each version's mean reward and its `z` confidence interval (null without sessions). */
export function versionRewards(
  outcomes: Record<string, VersionOutcomes>,
  z: number,
): VersionReward[] {
  return Object.entries(outcomes)
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([version, o]) => {
      if (o.sessions === 0) return { version, sessions: 0, mean: null, ci: null };
      const { mean, variance } = moments(o);
      const half = z * Math.sqrt(variance / o.sessions);
      return { version, sessions: o.sessions, mean, ci: [mean - half, mean + half] };
    });
}

/**
 * What the guard does under `config` with these outcomes: for each weighted candidate (any version
 * but `config.stable`) with at least `min_sessions` scored sessions, as the stable one has, whose
 * reward is below the stable's with confidence, its weight goes to 0. Nothing when disabled, when
 * the stable version has no weight, or when removing would leave no weight.
 */
export function guardActions(
  config: GuardConfig,
  weights: SplitWeights,
  outcomes: Record<string, VersionOutcomes>,
): GuardAction[] {
  if (!config.enabled || config.stable === null) return [];
  const stable = outcomes[config.stable];
  if (!stable || stable.sessions < config.min_sessions || !(weights[config.stable]! > 0)) return [];
  const s = moments(stable);
  const actions: GuardAction[] = [];
  let current = { ...weights };
  for (const [version, weight] of Object.entries(weights)) {
    const o = outcomes[version];
    if (version === config.stable || !(weight > 0) || !o || o.sessions < config.min_sessions)
      continue;
    const c = moments(o);
    const diff = c.mean - s.mean;
    const half = config.z * Math.sqrt(c.variance / o.sessions + s.variance / stable.sessions);
    if (diff + half >= 0) continue;
    const after = { ...current, [version]: 0 };
    actions.push({
      action: "remove",
      version,
      stable: config.stable,
      candidate_mean: c.mean,
      stable_mean: s.mean,
      difference_ci: [diff - half, diff + half],
      weights_before: current,
      weights_after: after,
    });
    current = after;
  }
  return actions;
}
