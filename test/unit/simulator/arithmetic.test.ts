import { describe, expect, it } from "vitest";
import {
  evaluateExpression,
  findExpression,
  formatNumber,
} from "../../../tools/simulator/arithmetic";

describe("simulator arithmetic", () => {
  it("evaluates integer expressions with precedence, parentheses and unary minus", () => {
    expect(evaluateExpression("12 * (3 + 4)")).toBe(84);
    expect(evaluateExpression("2 + 3 * 4 - 6 / 2")).toBe(11);
    expect(evaluateExpression("-(2 - 5) * 2")).toBe(6);
  });

  it("refuses what it cannot parse instead of evaluating it", () => {
    expect(evaluateExpression("1 / 0")).toBeUndefined();
    expect(evaluateExpression("2 + ")).toBeUndefined();
    expect(evaluateExpression("process.exit()")).toBeUndefined();
  });

  it("finds the longest expression in a question", () => {
    expect(findExpression("What is 12 * (3 + 4)? Answer briefly.")).toBe("12 * (3 + 4)");
    expect(findExpression("In 2024 we had 3 cats.")).toBeUndefined();
  });

  it("prints integers exactly and fractions to six places", () => {
    expect(formatNumber(7)).toBe("7");
    expect(formatNumber(1 / 3)).toBe("0.333333");
    expect(formatNumber(2.5)).toBe("2.5");
  });
});
