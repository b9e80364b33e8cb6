/** @module The dialogue agent: replies to every user turn. */
import type { Action } from "../../schemas/action";
import type { ChatMessage } from "../../schemas/chat";
import type { JsonValue } from "../../schemas/json";
import { BaseAgent } from "../../sdk/base-agent";
import type { ModelResponse } from "../../sdk/model-response";

/** Appends each observation as a user turn and each reply as the assistant's; the reply text is the action. */
export class DialogueAgent extends BaseAgent {
  #messages: ChatMessage[] = [];

  get chatCompletions(): ChatMessage[] {
    return this.#messages;
  }

  reset(): void {
    this.#messages = [
      { role: "system", content: "You are a helpful assistant. Keep answers short." },
    ];
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
