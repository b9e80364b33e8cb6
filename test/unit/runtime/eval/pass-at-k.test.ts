import { describe, expect, it } from "vitest";
import { passAtK, scoreByDataSource, scoreRows } from "../../../../src/runtime/eval/pass-at-k";
import type { EvalRow } from "../../../../src/schemas/batch-listing";

const row = (
  row_index: number,
  data_source: string,
  finished: number,
  passed: number,
  rewards: number[] = [],
): EvalRow => ({
  row_index,
  data_source,
  finished,
  passed,
  reward_sum: rewards.reduce((a, b) => a + b, 0),
  rewarded: rewards.length,
});

describe("passAtK (unbiased estimator, unit)", () => {
  it("matches 1 - C(n-c,k)/C(n,k) computed by hand", () => {
    // n=4, c=1, k=2: C(3,2)/C(4,2) = 3/6, so 0.5
    expect(passAtK(4, 1, 2)).toBeCloseTo(0.5, 12);
    // n=5, c=2, k=3: C(3,3)/C(5,3) = 1/10, so 0.9
    expect(passAtK(5, 2, 3)).toBeCloseTo(0.9, 12);
    // n=10, c=3, k=5: C(7,5)/C(10,5) = 21/252, so 1 - 1/12
    expect(passAtK(10, 3, 5)).toBeCloseTo(1 - 21 / 252, 12);
  });

  it("is c/n at k=1, 1 when fewer than k samples failed, 0 when none passed", () => {
    expect(passAtK(8, 3, 1)).toBeCloseTo(3 / 8, 12);
    expect(passAtK(4, 3, 2)).toBe(1);
    expect(passAtK(4, 0, 4)).toBe(0);
  });

  it("has no estimate with fewer samples than k, and refuses impossible counts", () => {
    expect(passAtK(2, 1, 3)).toBeNull();
    expect(() => passAtK(2, 3, 1)).toThrow(RangeError);
  });
});

describe("scoreRows (unit)", () => {
  it("averages per-row estimates, skips rows with fewer than k samples for pass@k, and means rewards over samples", () => {
    const rows = [
      row(0, "a", 4, 1, [1, 0, 0, 0]),
      row(1, "a", 4, 0, [0, 0, 0, 0]),
      row(2, "b", 4, 4, [1, 1, 1, 1]),
      row(3, "b", 1, 1, [1]),
      row(4, "b", 0, 0),
    ];
    const scores = scoreRows(rows, 2);
    // pass@1 over rows with samples: (1/4 + 0 + 1 + 1) / 4
    expect(scores.pass_at_1).toBeCloseTo((0.25 + 0 + 1 + 1) / 4, 12);
    // pass@2 over rows with >= 2 samples: (0.5 + 0 + 1) / 3
    expect(scores.pass_at_k).toBeCloseTo(1.5 / 3, 12);
    expect(scores).toMatchObject({ rows: 3, samples: 13 });
    expect(scores.mean_reward).toBeCloseTo(6 / 13, 12);
  });

  it("splits by data source, sorted", () => {
    const bySource = scoreByDataSource([row(0, "b", 2, 2, [1, 1]), row(1, "a", 2, 0, [0, 0])], 2);
    expect(bySource.map((s) => [s.data_source, s.pass_at_k])).toEqual([
      ["a", 0],
      ["b", 1],
    ]);
  });
});
