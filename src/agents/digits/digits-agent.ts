/** @module The learning demo's agent: each observation is a user turn, the model's text the action. */
import type { Action } from "../../schemas/action";
import type { ChatMessage } from "../../schemas/chat";
import type { JsonValue } from "../../schemas/json";
import { BaseAgent } from "../../sdk/base-agent";
import type { ModelResponse } from "../../sdk/model-response";

/** No system prompt: the conversation is the task's turns and the model's replies, append-only. */
export class DigitsAgent extends BaseAgent {
  #messages: ChatMessage[] = [];

  get chatCompletions(): ChatMessage[] {
    return this.#messages;
  }

  reset(): void {
    this.#messages = [];
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
