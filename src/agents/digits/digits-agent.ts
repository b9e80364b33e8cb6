/** @module The learning demo's agent: each observation is a user turn, the model's text the action. */
import { ChatTurnsAgent } from "../chat-turns-agent";

/** No system prompt: the conversation is the task's turns and the model's replies, append-only. */
export class DigitsAgent extends ChatTurnsAgent {
  protected systemPrompt(): null {
    return null;
  }
}
