/**
 * @module One application's sessions counted per version for its dashboard page. The reward
 * intervals come from the split guard's own function (`versionRewards`), so the page and the guard
 * never disagree on the statistics, only on the sessions counted (this application's vs. the
 * deployment's since the guard was set). Pure: no object is read here.
 */
import { versionRewards, type VersionReward } from "../../src/online";
import type { OnlineSessionView, ServingConfig, VersionOutcomes } from "../../src/schemas/online";

/** The normal quantile of a two-sided 95% interval. */
export const Z_95 = 1.96;

/** One version's row on an application's page. */
export interface VersionRow {
  version: string;
  /** Its split weight as a share of the total (null when not in the split). */
  share: number | null;
  sessions: number;
  open: number;
  scored: number;
  withheld: number;
  /** Feedback events over its sessions (every event, before the feedback rule combines them). */
  feedback: number;
  /** Mean reward of its scored sessions with a 95% interval. */
  reward: VersionReward;
}

/** Counts `sessions` per version: every served or weighted version has a row, and any version a session still has. */
export function versionRows(
  sessions: readonly OnlineSessionView[],
  serving: ServingConfig,
): VersionRow[] {
  const total = Object.values(serving.weights).reduce((sum, w) => sum + w, 0);
  const names = new Set([
    ...Object.keys(serving.versions),
    ...Object.keys(serving.weights),
    ...sessions.map((s) => String(s.version)),
  ]);
  const outcomes: Record<string, VersionOutcomes> = {};
  for (const name of names) outcomes[name] = { sessions: 0, sum: 0, sum_squares: 0 };
  for (const s of sessions) {
    if (s.status !== "scored" || s.reward === null) continue;
    const o = outcomes[String(s.version)]!;
    o.sessions += 1;
    o.sum += s.reward;
    o.sum_squares += s.reward * s.reward;
  }
  return versionRewards(outcomes, Z_95).map((reward) => {
    const mine = sessions.filter((s) => String(s.version) === reward.version);
    const weight = serving.weights[reward.version];
    return {
      version: reward.version,
      share: weight === undefined || total <= 0 ? null : weight / total,
      sessions: mine.length,
      open: mine.filter((s) => s.status === "open").length,
      scored: mine.filter((s) => s.status === "scored").length,
      withheld: mine.filter((s) => s.status === "withheld").length,
      feedback: mine.reduce((sum, s) => sum + s.feedback.length, 0),
      reward,
    };
  });
}
