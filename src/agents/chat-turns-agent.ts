/**
 * @module The demo agents' shared shape: after an optional system prompt, each observation is a
 * user turn and each reply the assistant's, the reply's text the action. The math, dialogue,
 * js-coder and digits agents differ only in their system prompt.
 */
import type { Action } from "../schemas/action";
import type { ChatMessage } from "../schemas/chat";
import type { JsonValue } from "../schemas/json";
import { BaseAgent } from "../sdk/base-agent";
import type { ModelResponse } from "../sdk/model-response";

/** Appends observations as user turns and replies as the assistant's; the reply text is the action. */
export abstract class ChatTurnsAgent extends BaseAgent {
  #messages: ChatMessage[] = [];

  /** The system prompt the conversation starts with, or null for none. */
  protected abstract systemPrompt(): string | null;

  get chatCompletions(): ChatMessage[] {
    return this.#messages;
  }

  reset(): void {
    const system = this.systemPrompt();
    this.#messages = system === null ? [] : [{ role: "system", content: system }];
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
