/** @module The dialogue agent: replies to every user turn. */
import { ChatTurnsAgent } from "../chat-turns-agent";

/** Appends each observation as a user turn and each reply as the assistant's; the reply text is the action. */
export class DialogueAgent extends ChatTurnsAgent {
  protected systemPrompt(): string {
    return "You are a helpful assistant. Keep answers short.";
  }
}
