/** @module The `calculate` tool: its schema for the model and its safe implementation. */
import type { ToolDefinition } from "../../schemas/chat";
import { ArithmeticError, evaluateArithmetic, formatNumber } from "../arithmetic";

/** The tool as offered to the model. */
export const CALCULATE_TOOL: ToolDefinition = {
  type: "function",
  function: {
    name: "calculate",
    description: "Evaluate an arithmetic expression with + - * / and parentheses.",
    parameters: {
      type: "object",
      properties: { expression: { type: "string", description: "e.g. (17 + 25) * 3" } },
      required: ["expression"],
    },
  },
};

/**
 * Runs one `calculate` call from its raw JSON arguments. Bad arguments or expressions become an
 * error string for the model to read, as a real tool would answer, never an exception.
 */
export function runCalculate(rawArguments: string): string {
  let expression: unknown;
  try {
    expression = (JSON.parse(rawArguments) as { expression?: unknown }).expression;
  } catch {
    return 'error: arguments must be JSON like {"expression": "1 + 2"}';
  }
  if (typeof expression !== "string") return "error: expression must be a string";
  try {
    return formatNumber(evaluateArithmetic(expression));
  } catch (error) {
    if (error instanceof ArithmeticError) return `error: ${error.message}`;
    throw error;
  }
}
