import { describe, expect, it } from "vitest";
import { guardActions, versionRewards } from "../../../src/online";
import { GuardConfig, type VersionOutcomes } from "../../../src/schemas/online";

/** The outcomes of `rewards`. */
const of = (rewards: number[]): VersionOutcomes => ({
  sessions: rewards.length,
  sum: rewards.reduce((a, b) => a + b, 0),
  sum_squares: rewards.reduce((a, b) => a + b * b, 0),
});
/** `n` rewards, `ones` of them 1 and the rest 0. */
const bernoulli = (n: number, ones: number) =>
  Array.from({ length: n }, (_, i) => (i < ones ? 1 : 0));
const ON = GuardConfig.parse({ enabled: true, stable: "3", min_sessions: 30 });

describe("the split guard (unit)", () => {
  it("takes a candidate out when its reward is below the stable version's with confidence", () => {
    const outcomes = { "3": of(bernoulli(100, 80)), "4": of(bernoulli(100, 40)) };
    const [action, ...rest] = guardActions(ON, { "3": 90, "4": 10 }, outcomes);
    expect(rest).toEqual([]);
    expect(action).toMatchObject({
      action: "remove",
      version: "4",
      weights_after: { "3": 90, "4": 0 },
    });
    expect(action!.difference_ci[1]).toBeLessThan(0);
  });

  it("leaves a candidate whose difference is within noise, or that has too few sessions", () => {
    expect(
      guardActions(
        ON,
        { "3": 50, "4": 50 },
        { "3": of(bernoulli(40, 24)), "4": of(bernoulli(40, 20)) },
      ),
    ).toEqual([]);
    expect(
      guardActions(
        ON,
        { "3": 50, "4": 50 },
        { "3": of(bernoulli(100, 90)), "4": of(bernoulli(10, 0)) },
      ),
    ).toEqual([]);
  });

  it("does nothing while off, which it is by default", () => {
    const outcomes = { "3": of(bernoulli(100, 80)), "4": of(bernoulli(100, 0)) };
    expect(GuardConfig.parse({}).enabled).toBe(false);
    expect(guardActions(GuardConfig.parse({ stable: "3" }), { "3": 1, "4": 1 }, outcomes)).toEqual(
      [],
    );
  });

  it("reports each version's mean reward with its confidence interval", () => {
    const [v3] = versionRewards({ "3": of(bernoulli(100, 50)) }, 1.96);
    expect(v3!.mean).toBe(0.5);
    expect(v3!.ci![0]).toBeCloseTo(0.5 - 1.96 * Math.sqrt(25 / 99 / 100), 6);
  });
});
