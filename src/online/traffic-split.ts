/**
 * @module The traffic split between serving versions: which version a new session gets (a hash of
 * its id against the weights, so the same id lands alike in every isolate), and what makes a split
 * valid. A session keeps the version it got (stored at its first call); a new split only moves
 * sessions that have not started.
 */
import { fnv1a32, mix32 } from "../fnv1a";
import type { SplitWeights } from "../schemas/online";

/** A problem with a split, naming the field. */
export interface SplitProblem {
  path: string;
  message: string;
}

/**
 * Problems of `weights` against the versions served (`versions`): every weighted version must be
 * served, and the weights must sum to a positive total. Empty when the split is valid.
 */
export function splitProblems(weights: SplitWeights, versions: readonly string[]): SplitProblem[] {
  const problems: SplitProblem[] = Object.keys(weights)
    .filter((version) => !versions.includes(version))
    .map((version) => ({
      path: `weights.${version}`,
      message: `version ${version} is not in the serving configuration (served: ${versions.join(", ") || "none"})`,
    }));
  const total = Object.values(weights).reduce((sum, weight) => sum + weight, 0);
  if (!(total > 0))
    problems.push({ path: "weights", message: "weights must sum to a positive total" });
  return problems;
}

/**
 * The version a session named `sessionId` of `appId` is assigned under `weights` (valid, see
 * `splitProblems`): its hash, as a fraction of 2^32, against the cumulative weights in version
 * order. Deterministic, so two isolates with the same split assign alike. The hash is mixed first:
 * FNV-1a alone split 100 ids that differ only at their end (`conv-0`…) 7x wider than a fair coin.
 *
 * @example
 * assignVersion("app-0123456789ab", "s-1", { "3": 90, "4": 10 }) // 3 for about 90% of ids
 */
export function assignVersion(appId: string, sessionId: string, weights: SplitWeights): number {
  const entries = Object.entries(weights)
    .filter(([, weight]) => weight > 0)
    .sort(([a], [b]) => Number(a) - Number(b));
  const total = entries.reduce((sum, [, weight]) => sum + weight, 0);
  const point = (mix32(fnv1a32(`${appId}/${sessionId}`)) / 2 ** 32) * total;
  let reached = 0;
  for (const [version, weight] of entries) {
    reached += weight;
    if (point < reached) return Number(version);
  }
  return Number(entries.at(-1)![0]);
}
