/** @module The js-coder agent: writes a function, reads the failing tests, tries again. */
import { ChatTurnsAgent } from "../chat-turns-agent";

/** System prompt of the js-coder demo. */
export const JS_CODER_SYSTEM_PROMPT =
  "You write small JavaScript functions. Answer with the complete function, exported by name, in one ```js code block.";

/** Observations (the task, then test failures) become user messages; the model's text is the action. */
export class JsCoderAgent extends ChatTurnsAgent {
  protected systemPrompt(): string {
    return JS_CODER_SYSTEM_PROMPT;
  }
}
