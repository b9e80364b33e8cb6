/**
 * @module The calculator task the two framework examples share: the demo's instructions and a
 * `calculate` tool body over the safe evaluator of `src/agents/arithmetic.ts` (never `eval`).
 */
import { ArithmeticError, evaluateArithmetic, formatNumber } from "../../src/agents/arithmetic";
import { CALCULATE_TOOL } from "../../src/agents/calculator/calculate-tool";

export { CALCULATOR_SYSTEM_PROMPT } from "../../src/agents/calculator/calculator-agent";
export { gradeBoxedAnswer } from "../../src/agents/grading";

/** What the tool tells the model it does. */
export const CALCULATE_DESCRIPTION =
  CALCULATE_TOOL.function.description ?? "Evaluate an arithmetic expression.";

/**
 * Evaluates `expression` and returns the result as text; a malformed expression becomes an
 * `error: …` string for the model to read, as a real tool would answer, never an exception.
 */
export function calculate(expression: string): string {
  try {
    return formatNumber(evaluateArithmetic(expression));
  } catch (error) {
    if (error instanceof ArithmeticError) return `error: ${error.message}`;
    throw error;
  }
}
