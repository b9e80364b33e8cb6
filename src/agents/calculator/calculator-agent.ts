/** @module The calculator agent: calls the `calculate` tool, then answers. */
import type { Action } from "../../schemas/action";
import type { ChatMessage, ToolDefinition } from "../../schemas/chat";
import type { JsonValue } from "../../schemas/json";
import { BaseAgent } from "../../sdk/base-agent";
import type { ModelResponse } from "../../sdk/model-response";
import { CALCULATE_TOOL } from "./calculate-tool";
import type { ToolResult } from "./calculator-env";

/** System prompt of the calculator demo. */
export const CALCULATOR_SYSTEM_PROMPT =
  "You solve arithmetic problems. Use the calculate tool for any computation, then give the final answer in \\boxed{}.";

/** Keeps the chat; tool calls become `{tool_calls}` actions, plain text becomes `{answer}`. */
export class CalculatorAgent extends BaseAgent {
  #messages: ChatMessage[] = [];

  get chatCompletions(): ChatMessage[] {
    return this.#messages;
  }

  override get tools(): ToolDefinition[] {
    return [CALCULATE_TOOL];
  }

  reset(): void {
    this.#messages = [{ role: "system", content: CALCULATOR_SYSTEM_PROMPT }];
  }

  updateFromEnv(observation: JsonValue): void {
    if (typeof observation === "string") {
      if (observation !== "") this.#messages.push({ role: "user", content: observation });
      return;
    }
    const results = (observation as { tool_results?: ToolResult[] } | null)?.tool_results ?? [];
    for (const result of results)
      this.#messages.push({
        role: "tool",
        tool_call_id: result.tool_call_id,
        content: result.content,
      });
  }

  updateFromModel(response: ModelResponse): Action {
    this.#messages.push(response.message);
    if (response.toolCalls.length > 0) {
      return {
        action: {
          tool_calls: response.toolCalls.map((call) => ({
            id: call.id,
            name: call.function.name,
            arguments: call.function.arguments,
          })),
        },
      };
    }
    return { action: { answer: response.text } };
  }
}
