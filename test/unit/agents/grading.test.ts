import { describe, expect, it } from "vitest";
import { extractBoxed, gradeBoxedAnswer } from "../../../src/agents/grading";

describe("extractBoxed", () => {
  it("returns the trimmed content of a box", () => {
    expect(extractBoxed("so the answer is \\boxed{ 42 }.")).toBe("42");
  });

  it("keeps nested braces inside the box", () => {
    expect(extractBoxed("\\boxed{\\frac{1}{2}}")).toBe("\\frac{1}{2}");
    expect(extractBoxed("x = \\boxed{{a}{b{c}}} done")).toBe("{a}{b{c}}");
  });

  it("uses the last box when there are several", () => {
    expect(extractBoxed("first \\boxed{1}, then corrected to \\boxed{2}")).toBe("2");
  });

  it("returns null without a box or when the last box never closes", () => {
    expect(extractBoxed("the answer is 42")).toBeNull();
    expect(extractBoxed("boxed{42}")).toBeNull();
    expect(extractBoxed("\\boxed{\\frac{1}{2}")).toBeNull();
  });
});

describe("gradeBoxedAnswer", () => {
  it("scores 1 for a numerically equal answer and 0 otherwise", () => {
    expect(gradeBoxedAnswer("\\boxed{126}", 126)).toBe(1);
    expect(gradeBoxedAnswer("\\boxed{126.0}", "126")).toBe(1);
    expect(gradeBoxedAnswer("\\boxed{127}", 126)).toBe(0);
    expect(gradeBoxedAnswer("\\boxed{-0}", 0)).toBe(1);
  });

  it("tolerates rounding to six decimals but not a wrong digit", () => {
    expect(gradeBoxedAnswer("\\boxed{0.333333}", 1 / 3)).toBe(1);
    expect(gradeBoxedAnswer("\\boxed{0.3333}", 1 / 3)).toBe(0);
    expect(gradeBoxedAnswer("\\boxed{1234567.8}", 1234567.8000001)).toBe(1);
    expect(gradeBoxedAnswer("\\boxed{1234568.8}", 1234567.8)).toBe(0);
  });

  it("does not accept a near-miss integer for a large ground truth", () => {
    // 1234 * 5678 = 7006652; an answer off by one is wrong however large the number is.
    expect(gradeBoxedAnswer("\\boxed{7006653}", 7006652)).toBe(0);
    expect(gradeBoxedAnswer("\\boxed{7006652}", 7006652)).toBe(1);
    expect(gradeBoxedAnswer("\\boxed{1000001}", "1000000")).toBe(0);
  });

  it("ignores thousands separators in the answer", () => {
    expect(gradeBoxedAnswer("\\boxed{1,234,567}", 1234567)).toBe(1);
    expect(gradeBoxedAnswer("\\boxed{1,000}", "1000")).toBe(1);
  });

  it("compares non-numeric answers as exact strings", () => {
    expect(gradeBoxedAnswer("\\boxed{Paris}", "Paris")).toBe(1);
    expect(gradeBoxedAnswer("\\boxed{ Paris }", " Paris")).toBe(1);
    expect(gradeBoxedAnswer("\\boxed{paris}", "Paris")).toBe(0);
    expect(gradeBoxedAnswer("\\boxed{\\frac{1}{2}}", "\\frac{1}{2}")).toBe(1);
  });

  it("scores 0 without a box, for an empty box, or without a ground truth", () => {
    expect(gradeBoxedAnswer("42", 42)).toBe(0);
    expect(gradeBoxedAnswer("\\boxed{}", 0)).toBe(0);
    expect(gradeBoxedAnswer("\\boxed{null}", null)).toBe(0);
    expect(gradeBoxedAnswer("\\boxed{0}", null)).toBe(0);
  });
});
