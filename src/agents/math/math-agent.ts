/** @module The math agent: asks once, answers once. */
import { ChatTurnsAgent } from "../chat-turns-agent";

/** System prompt of the math demo. */
export const MATH_SYSTEM_PROMPT =
  "You are a careful math solver. Reason briefly, then give the final answer in \\boxed{}.";

/** Sends the problem as the user message; the model's text is the action. */
export class MathAgent extends ChatTurnsAgent {
  protected systemPrompt(): string {
    return MATH_SYSTEM_PROMPT;
  }
}
