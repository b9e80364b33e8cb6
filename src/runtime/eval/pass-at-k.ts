/**
 * @module pass@k by the unbiased estimator of Chen et al. (2021), "Evaluating Large Language
 * Models Trained on Code": for a row with n samples of which c pass,
 * pass@k = 1 - C(n-c, k) / C(n, k), averaged over rows. Computed as a running product so large
 * n never overflows a binomial coefficient.
 */
import type { EvalRow } from "../../schemas/batch-listing";
import type { EvalScores } from "../../schemas/eval-report";

/**
 * The unbiased pass@k estimate of one row with `n` samples of which `c` passed; null when n < k
 * (too few samples to estimate it).
 *
 * @example
 * passAtK(4, 1, 2) // 1 - C(3,2)/C(4,2) = 1 - 3/6 = 0.5
 */
export function passAtK(n: number, c: number, k: number): number | null {
  if (
    !Number.isInteger(n) ||
    !Number.isInteger(c) ||
    !Number.isInteger(k) ||
    k < 1 ||
    c < 0 ||
    c > n
  )
    throw new RangeError(
      `passAtK needs integers 0 <= c <= n and k >= 1 (got n=${n}, c=${c}, k=${k})`,
    );
  if (n < k) return null;
  if (n - c < k) return 1;
  // C(n-c, k) / C(n, k) = prod_{i = n-c+1}^{n} (1 - k / i)
  let fail = 1;
  for (let i = n - c + 1; i <= n; i++) fail *= 1 - k / i;
  return 1 - fail;
}

function mean(values: number[]): number | null {
  return values.length === 0 ? null : values.reduce((sum, v) => sum + v, 0) / values.length;
}

/** pass@1, pass@k and mean reward over `rows` (rows with fewer than k finished samples are left out of pass@k). */
export function scoreRows(rows: readonly EvalRow[], k: number): EvalScores {
  const at1: number[] = [];
  const atK: number[] = [];
  let samples = 0;
  let rewardSum = 0;
  let rewarded = 0;
  for (const row of rows) {
    samples += row.finished;
    rewardSum += row.reward_sum;
    rewarded += row.rewarded;
    if (row.finished === 0) continue;
    at1.push(passAtK(row.finished, row.passed, 1)!);
    const estimate = passAtK(row.finished, row.passed, k);
    if (estimate !== null) atK.push(estimate);
  }
  return {
    rows: atK.length,
    samples,
    pass_at_1: mean(at1),
    pass_at_k: mean(atK),
    mean_reward: rewarded === 0 ? null : rewardSum / rewarded,
  };
}

/** Scores per data source, sorted by name. */
export function scoreByDataSource(
  rows: readonly EvalRow[],
  k: number,
): Array<EvalScores & { data_source: string }> {
  const groups = new Map<string, EvalRow[]>();
  for (const row of rows) {
    const list = groups.get(row.data_source) ?? [];
    list.push(row);
    groups.set(row.data_source, list);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([dataSource, list]) => ({ data_source: dataSource, ...scoreRows(list, k) }));
}
