import { describe, expect, it } from "vitest";
import { ArithmeticError, evaluateArithmetic, formatNumber } from "../../../src/agents/arithmetic";

describe("evaluateArithmetic", () => {
  it("binds * and / tighter than + and -, and evaluates left to right", () => {
    expect(evaluateArithmetic("2 + 3 * 4")).toBe(14);
    expect(evaluateArithmetic("20 - 6 / 3")).toBe(18);
    expect(evaluateArithmetic("10 - 4 - 3")).toBe(3);
    expect(evaluateArithmetic("64 / 4 / 2")).toBe(8);
    expect(evaluateArithmetic("2*3+4*5")).toBe(26);
  });

  it("lets parentheses override precedence, including nested ones", () => {
    expect(evaluateArithmetic("(2 + 3) * 4")).toBe(20);
    expect(evaluateArithmetic("((17 + 25)) * 3")).toBe(126);
    expect(evaluateArithmetic("100 / (2 * (3 + 2))")).toBe(10);
  });

  it("applies unary minus to numbers, parentheses and itself", () => {
    expect(evaluateArithmetic("-5 + 2")).toBe(-3);
    expect(evaluateArithmetic("2 * -3")).toBe(-6);
    expect(evaluateArithmetic("-(4 - 10)")).toBe(6);
    expect(evaluateArithmetic("--7")).toBe(7);
    expect(evaluateArithmetic("3 - -2")).toBe(5);
  });

  it("reads decimals and returns fractional quotients", () => {
    expect(evaluateArithmetic("1.5 * 4")).toBe(6);
    expect(evaluateArithmetic("0.25 + 0.5")).toBe(0.75);
    expect(evaluateArithmetic("7 / 2")).toBe(3.5);
  });

  it("rejects division by zero, also when the divisor is computed", () => {
    expect(() => evaluateArithmetic("1 / 0")).toThrow(/division by zero/);
    expect(() => evaluateArithmetic("5 / (3 - 3)")).toThrow(ArithmeticError);
    expect(() => evaluateArithmetic("0 / 0")).toThrow(ArithmeticError);
  });

  it("rejects anything that is not a well-formed expression", () => {
    for (const garbage of [
      "",
      "   ",
      "2 +",
      "(1 + 2",
      "1 + 2)",
      "2 3",
      "abc",
      "1e3",
      ".5",
      "2 ^ 3",
      "+3",
      "1..2",
      "process.exit()",
    ]) {
      expect(() => evaluateArithmetic(garbage), garbage).toThrow(ArithmeticError);
    }
  });

  it("rejects a result that is not finite", () => {
    expect(() => evaluateArithmetic("9".repeat(400))).toThrow(/not finite/);
  });

  it("rejects input over 500 characters but accepts exactly 500", () => {
    const ones = (n: number) => Array.from({ length: n }, () => "1").join("+");
    const exact = ones(250) + "+0";
    expect(exact).toHaveLength(501);
    expect(() => evaluateArithmetic(exact)).toThrow(/longer than 500/);
    const fits = ones(250).padEnd(500, " ");
    expect(fits).toHaveLength(500);
    expect(evaluateArithmetic(fits)).toBe(250);
  });

  it("rejects parentheses nested deeper than 50 without overflowing the stack", () => {
    const nested = (depth: number) => `${"(".repeat(depth)}1${")".repeat(depth)}`;
    expect(evaluateArithmetic(nested(50))).toBe(1);
    expect(() => evaluateArithmetic(nested(51))).toThrow(/nested too deeply/);
    expect(() => evaluateArithmetic("-".repeat(499) + "1")).not.toThrow();
  });
});

describe("formatNumber", () => {
  it("writes integers without a decimal point", () => {
    expect(formatNumber(42)).toBe("42");
    expect(formatNumber(-7)).toBe("-7");
    expect(formatNumber(6.0)).toBe("6");
  });

  it("rounds other numbers to at most six decimals and drops trailing zeros", () => {
    expect(formatNumber(1 / 3)).toBe("0.333333");
    expect(formatNumber(2 / 3)).toBe("0.666667");
    expect(formatNumber(2.5)).toBe("2.5");
    expect(formatNumber(0.1 + 0.2)).toBe("0.3");
    expect(formatNumber(-1 / 8)).toBe("-0.125");
  });
});
