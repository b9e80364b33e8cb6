/** @module The js-coder agent: writes a function, reads the failing tests, tries again. */
import type { Action } from "../../schemas/action";
import type { ChatMessage } from "../../schemas/chat";
import type { JsonValue } from "../../schemas/json";
import { BaseAgent } from "../../sdk/base-agent";
import type { ModelResponse } from "../../sdk/model-response";

/** System prompt of the js-coder demo. */
export const JS_CODER_SYSTEM_PROMPT =
  "You write small JavaScript functions. Answer with the complete function, exported by name, in one ```js code block.";

/** Observations (the task, then test failures) become user messages; the model's text is the action. */
export class JsCoderAgent extends BaseAgent {
  #messages: ChatMessage[] = [];

  get chatCompletions(): ChatMessage[] {
    return this.#messages;
  }

  reset(): void {
    this.#messages = [{ role: "system", content: JS_CODER_SYSTEM_PROMPT }];
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
