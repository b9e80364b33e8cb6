import { describe, expect, it } from "vitest";
import { exceedsStaleness } from "../../../src/training/staleness";
import { trainingModes } from "../../../src/training/training-modes";

describe("the staleness rule (unit)", () => {
  it("allows exactly k versions between the oldest token and the trainer", () => {
    const k = trainingModes.resolve("async/1").max_staleness;
    expect(exceedsStaleness(4, 3, k)).toBe(false);
    expect(exceedsStaleness(5, 3, k)).toBe(true);
    expect(exceedsStaleness(3, 3, 0)).toBe(false);
    expect(exceedsStaleness(4, 3, 0)).toBe(true);
  });

  it("never calls a rollout stale before it generated anything", () => {
    expect(exceedsStaleness(1_000, null, 0)).toBe(false);
  });
});
