import { describe, expect, it } from "vitest";
import { combineFeedback } from "../../../src/online";

describe("the feedback rule (unit)", () => {
  it("takes each source's last reward and averages the sources", () => {
    expect(
      combineFeedback([
        { source: "user", reward: 0 },
        { source: "task", reward: 0.2 },
        { source: "user", reward: 1 },
      ]),
    ).toBeCloseTo(0.6);
  });

  it("gives no reward without feedback, so the session is withheld rather than scored 0", () => {
    expect(combineFeedback([])).toBeNull();
  });

  it("weighs sources alike however many events each sent", () => {
    const many = Array.from({ length: 9 }, () => ({ source: "user", reward: 1 }));
    expect(combineFeedback([...many, { source: "task", reward: 0 }])).toBe(0.5);
  });
});
