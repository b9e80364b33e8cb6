/** @module The math agent: asks once, answers once. */
import type { Action } from "../../schemas/action";
import type { ChatMessage } from "../../schemas/chat";
import type { JsonValue } from "../../schemas/json";
import { BaseAgent } from "../../sdk/base-agent";
import type { ModelResponse } from "../../sdk/model-response";

/** System prompt of the math demo. */
export const MATH_SYSTEM_PROMPT =
  "You are a careful math solver. Reason briefly, then give the final answer in \\boxed{}.";

/** Sends the problem as the user message; the model's text is the action. */
export class MathAgent extends BaseAgent {
  #messages: ChatMessage[] = [];

  get chatCompletions(): ChatMessage[] {
    return this.#messages;
  }

  reset(): void {
    this.#messages = [{ role: "system", content: MATH_SYSTEM_PROMPT }];
  }

  updateFromEnv(observation: JsonValue): void {
    if (typeof observation === "string" && observation !== "")
      this.#messages.push({ role: "user", content: observation });
  }

  updateFromModel(response: ModelResponse): Action {
    this.#messages.push(response.message);
    return { action: response.text };
  }
}
