/** @module Multi-turn arithmetic with a calculator tool; the final boxed answer is graded. */
import type { JsonValue } from "../../schemas/json";
import type { EnvStepResult } from "../../sdk/base-env";
import { ProblemEnv } from "../problem-env";
import { gradeBoxedAnswer } from "../grading";
import { runCalculate } from "./calculate-tool";

/** A tool call as the calculator agent passes it in its action. */
interface CalculatorToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** The result of one tool call, observed by the agent as a `tool` message. */
export interface ToolResult {
  tool_call_id: string;
  name: string;
  content: string;
}

function toolCallsOf(action: JsonValue): CalculatorToolCall[] | null {
  if (
    typeof action !== "object" ||
    action === null ||
    Array.isArray(action) ||
    !Array.isArray(action.tool_calls)
  )
    return null;
  return action.tool_calls.map((call) => {
    const c = (call ?? {}) as Record<string, JsonValue>;
    return {
      id: String(c.id ?? ""),
      name: String(c.name ?? ""),
      arguments: String(c.arguments ?? ""),
    };
  });
}

/**
 * Actions are `{tool_calls: [...]}` (executed, results observed, reward 0) or `{answer: text}`
 * (graded against ground_truth, episode done). Stateless between steps apart from the task, so
 * replaying actions rebuilds it exactly.
 */
export class CalculatorEnv extends ProblemEnv {
  step(action: JsonValue): EnvStepResult {
    const calls = toolCallsOf(action);
    if (calls) {
      const results: ToolResult[] = calls.map((call) => ({
        tool_call_id: call.id,
        name: call.name,
        content:
          call.name === "calculate"
            ? runCalculate(call.arguments)
            : `error: unknown tool "${call.name}"`,
      }));
      return [
        { tool_results: results as unknown as JsonValue[] },
        0,
        false,
        { tool_calls: calls.length },
      ];
    }
    const answer =
      typeof action === "object" &&
      action !== null &&
      !Array.isArray(action) &&
      typeof action.answer === "string"
        ? action.answer
        : "";
    const reward = gradeBoxedAnswer(answer, this.task.ground_truth);
    return ["", reward, true, { correct: reward === 1 }];
  }
}
