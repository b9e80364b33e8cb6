import { describe, expect, it } from "vitest";
import { GRPO_EPSILON, grpoAdvantages } from "../../../../src/runtime/eval/grpo-advantage";

describe("grpoAdvantages (unit): verl's compute_grpo_outcome_advantage for one group", () => {
  it("uses the unbiased std: rewards 0, 1 give ±0.7071 (std 0.7071), Dr.GRPO ±0.5", () => {
    const out = grpoAdvantages([0, 1]);
    expect(out.mean).toBe(0.5);
    expect(out.std).toBeCloseTo(Math.SQRT1_2, 12);
    expect(out.grpo[0]).toBeCloseTo(-0.5 / (Math.SQRT1_2 + GRPO_EPSILON), 12);
    expect(out.grpo[1]).toBeCloseTo(0.7071, 4);
    expect(out.drgrpo).toEqual([-0.5, 0.5]);
  });

  it("gives a one-member group mean 0 and std 1 (its advantage is its score over 1 + 1e-6)", () => {
    const out = grpoAdvantages([0.8]);
    expect([out.mean, out.std]).toEqual([0, 1]);
    expect(out.grpo[0]).toBeCloseTo(0.8 / (1 + GRPO_EPSILON), 12);
    expect(out.drgrpo).toEqual([0.8]);
  });

  it("gives a group without spread advantage 0, and graded rewards their z-scores", () => {
    expect(grpoAdvantages([1, 1, 1]).grpo).toEqual([0, 0, 0]);
    const out = grpoAdvantages([0.2, 0.4, 0.9, 1]);
    const mean = 0.625;
    const std = Math.sqrt([0.2, 0.4, 0.9, 1].reduce((s, r) => s + (r - mean) ** 2, 0) / 3);
    expect(out.std).toBeCloseTo(std, 12);
    out.grpo.forEach((a, i) =>
      expect(a).toBeCloseTo(([0.2, 0.4, 0.9, 1][i]! - mean) / (std + 1e-6), 12),
    );
  });
});
