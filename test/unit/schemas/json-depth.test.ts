import { describe, expect, it } from "vitest";
import { withoutGroundTruth } from "../../../src/schemas/agent-task";
import { jsonNestingDepth } from "../../../src/schemas/json";

describe("jsonNestingDepth", () => {
  it("counts the deepest nesting of arrays and objects", () => {
    expect(jsonNestingDepth("1")).toBe(0);
    expect(jsonNestingDepth('{"a":[1,{"b":[]}],"c":{}}')).toBe(4);
    expect(jsonNestingDepth(`${"[".repeat(2000)}${"]".repeat(2000)}`)).toBe(2000);
  });

  it("ignores brackets inside strings, escaped quotes included", () => {
    expect(jsonNestingDepth('{"a":"[[[{{{\\"[[["}')).toBe(1);
  });

  it("stops early once past the bound", () => {
    expect(jsonNestingDepth("[".repeat(100_000), 64)).toBe(65);
  });
});

describe("withoutGroundTruth", () => {
  it("drops reward_model.ground_truth and keeps the rest", () => {
    const args = { reward_model: { style: "rule", ground_truth: "42" }, other: 1 };
    expect(withoutGroundTruth(args)).toEqual({ reward_model: { style: "rule" }, other: 1 });
    expect(args.reward_model.ground_truth).toBe("42");
    expect(withoutGroundTruth({ other: 1 })).toEqual({ other: 1 });
  });
});
