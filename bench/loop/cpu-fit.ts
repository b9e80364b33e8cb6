/**
 * @module CPU per step as a per-rollout part and a per-step part: a rollout that makes `s` steps
 * costs `F + P·s`, so its CPU per step is `F/s + P`. Measured at two or more step counts, the
 * two parts say whether a gap to a bare Worker is in what every rollout costs once (its creation,
 * hand-offs, publication) or in every step, and from how many steps a per-step goal is met.
 */

/** One measured point: steps per rollout and the CPU per step measured at that count. */
export interface StepPoint {
  steps: number;
  msPerStep: number;
}

/** The fitted parts: ms once per rollout and ms per step. */
export interface CpuParts {
  perRolloutMs: number;
  perStepMs: number;
}

/**
 * Least-squares fit of `msPerStep · steps = F + P · steps` (each point's CPU per rollout against
 * its steps). Needs two different step counts; throws otherwise.
 */
export function fitCpuParts(points: readonly StepPoint[]): CpuParts {
  const counts = new Set(points.map((p) => p.steps));
  if (counts.size < 2) throw new RangeError("fitting needs points at two different step counts");
  const n = points.length;
  const xs = points.map((p) => p.steps);
  const ys = points.map((p) => p.msPerStep * p.steps);
  const meanX = xs.reduce((a, b) => a + b, 0) / n;
  const meanY = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i]! - meanX) * (ys[i]! - meanY);
    sxx += (xs[i]! - meanX) ** 2;
  }
  const perStepMs = sxy / sxx;
  return { perRolloutMs: meanY - perStepMs * meanX, perStepMs };
}

/**
 * The fewest steps per rollout at which `above` (ours less the floor) is at most `goalMs` per
 * step: null when the per-step part alone is over the goal (no rollout length meets it).
 */
export function stepsToMeet(above: CpuParts, goalMs: number): number | null {
  if (above.perStepMs >= goalMs) return null;
  if (above.perRolloutMs <= 0) return 1;
  return Math.max(1, Math.ceil(above.perRolloutMs / (goalMs - above.perStepMs) - 1e-9));
}

/** The printed lines: each count's figures, both fits, the difference and where the goal is met. */
export function formatCpuFit(
  ours: readonly StepPoint[],
  floor: readonly StepPoint[],
  goalMs: number,
): string[] {
  const o = fitCpuParts(ours);
  const f = fitCpuParts(floor);
  const above = {
    perRolloutMs: o.perRolloutMs - f.perRolloutMs,
    perStepMs: o.perStepMs - f.perStepMs,
  };
  const meet = stepsToMeet(above, goalMs);
  const part = (p: CpuParts) =>
    `${p.perRolloutMs.toFixed(2)} ms per rollout + ${p.perStepMs.toFixed(2)} ms per step`;
  return [
    ...ours.map(
      (point, i) =>
        `  ${String(point.steps).padStart(3)} steps: ours ${point.msPerStep.toFixed(2)} ms/step, the floor with publication ${floor[i]!.msPerStep.toFixed(2)}, above it ${(point.msPerStep - floor[i]!.msPerStep).toFixed(2)}`,
    ),
    `  ours: ${part(o)}; the floor with publication: ${part(f)}`,
    `  above the floor: ${part(above)}; ≤ ${goalMs.toFixed(1)} ms/step ${meet === null ? "at no rollout length (the per-step part alone is over it)" : `from ${meet} steps per rollout`}`,
  ];
}
