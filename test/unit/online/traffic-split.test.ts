import { describe, expect, it } from "vitest";
import { assignVersion, splitProblems } from "../../../src/online";

const APP = "app-0123456789ab";

describe("the traffic split (unit)", () => {
  it("assigns sessions to versions in proportion to their weights", () => {
    const counts = new Map<number, number>();
    for (let i = 0; i < 10_000; i++) {
      const version = assignVersion(APP, `s-${i}`, { "3": 90, "4": 10 });
      counts.set(version, (counts.get(version) ?? 0) + 1);
    }
    // Binomial(10000, 0.1): sd 30, so ±150 is five sd.
    expect(Math.abs((counts.get(4) ?? 0) - 1_000)).toBeLessThan(150);
    expect((counts.get(3) ?? 0) + (counts.get(4) ?? 0)).toBe(10_000);
  });

  it("splits a few sequential ids like a fair coin, not in runs", () => {
    // 100 ids that differ only in their last characters, for 400 applications: each application's
    // count on one side of a 50/50 split is Binomial(100, 0.5), variance 25 (FNV-1a alone gave 184).
    const counts = Array.from({ length: 400 }, (_, a) => {
      const app = `app-${(a * 7919).toString(16).padStart(12, "0")}`;
      return Array.from({ length: 100 }, (_, i) =>
        assignVersion(app, `conv-${i}`, { "3": 1, "4": 1 }),
      ).filter((version) => version === 3).length;
    });
    const mean = counts.reduce((sum, c) => sum + c, 0) / counts.length;
    const variance = counts.reduce((sum, c) => sum + (c - mean) ** 2, 0) / counts.length;
    expect(Math.abs(mean - 50)).toBeLessThan(1.5);
    // The sample variance of 400 draws of a variance-25 count stays within about ±20% of it.
    expect(variance).toBeGreaterThan(18);
    expect(variance).toBeLessThan(33);
  });

  it("assigns a session id alike every time, and never to a version of weight 0", () => {
    const weights = { "3": 1, "4": 1, "5": 0 };
    for (let i = 0; i < 500; i++) {
      const version = assignVersion(APP, `s-${i}`, weights);
      expect(version).not.toBe(5);
      expect(assignVersion(APP, `s-${i}`, weights)).toBe(version);
    }
  });

  it("names a weighted version that is not served, and a split that sums to nothing", () => {
    expect(splitProblems({ "3": 1, "9": 2 }, ["3", "4"]).map((p) => p.path)).toEqual(["weights.9"]);
    expect(splitProblems({ "3": 0, "4": 0 }, ["3", "4"]).map((p) => p.path)).toEqual(["weights"]);
    expect(splitProblems({}, ["3"]).map((p) => p.path)).toEqual(["weights"]);
    expect(splitProblems({ "3": 0, "4": 5 }, ["3", "4"])).toEqual([]);
  });
});
