/** Unit: splitting CPU per step into what a rollout costs once and what each step costs. */
import { describe, expect, it } from "vitest";
import { fitCpuParts, formatCpuFit, stepsToMeet } from "../../../bench/loop/cpu-fit";

/** Points of a rollout costing `f` once and `p` per step. */
const points = (f: number, p: number, counts: number[]) =>
  counts.map((steps) => ({ steps, msPerStep: f / steps + p }));

describe("fitCpuParts", () => {
  it("recovers the per-rollout and per-step parts from two step counts", () => {
    const fit = fitCpuParts(points(9, 1.1, [2, 10]));
    expect(fit.perRolloutMs).toBeCloseTo(9, 9);
    expect(fit.perStepMs).toBeCloseTo(1.1, 9);
  });

  it("fits noisy points at several counts by least squares", () => {
    const fit = fitCpuParts([
      { steps: 2, msPerStep: 5.6 },
      { steps: 2, msPerStep: 5.7 },
      { steps: 10, msPerStep: 1.9 },
      { steps: 10, msPerStep: 2.1 },
    ]);
    // Per rollout: 11.3 at 2 steps and 20 at 10 (means): P = 8.7 / 8, F = 11.3 - 2P.
    expect(fit.perStepMs).toBeCloseTo(8.7 / 8, 9);
    expect(fit.perRolloutMs).toBeCloseTo(11.3 - (2 * 8.7) / 8, 9);
  });

  it("refuses points at a single step count", () => {
    expect(() => fitCpuParts(points(9, 1, [5, 5]))).toThrow(RangeError);
  });
});

describe("stepsToMeet", () => {
  it("is the fewest steps whose share of the per-rollout part fits under the goal", () => {
    // 5.2 / s + 0.45 <= 1.0 from s = 9.45, so 10.
    expect(stepsToMeet({ perRolloutMs: 5.2, perStepMs: 0.45 }, 1)).toBe(10);
    expect(stepsToMeet({ perRolloutMs: 5.5, perStepMs: 0.45 }, 1)).toBe(10);
    expect(stepsToMeet({ perRolloutMs: 0.5, perStepMs: 0.2 }, 1)).toBe(1);
  });

  it("is null when each step alone costs more than the goal", () => {
    expect(stepsToMeet({ perRolloutMs: 1, perStepMs: 1.2 }, 1)).toBeNull();
  });
});

describe("formatCpuFit", () => {
  it("prints each count, both fits and where the goal is met", () => {
    const lines = formatCpuFit(points(9, 1.05, [2, 10]), points(4, 0.6, [2, 10]), 1);
    expect(lines).toHaveLength(4);
    expect(lines[0]).toContain(
      "2 steps: ours 5.55 ms/step, the floor with publication 2.60, above it 2.95",
    );
    expect(lines[3]).toContain("above the floor: 5.00 ms per rollout + 0.45 ms per step");
    expect(lines[3]).toContain("from 10 steps per rollout");
  });
});
