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
