/** @module What an agent receives from one model call. */
import type { ChatMessage, ToolCall } from "../schemas/chat";

/**
 * The model's answer as an agent sees it: the assistant message (content and tool calls, exactly
 * as the engine returned them), its text, and why generation stopped.
 */
export interface ModelResponse {
  /** The assistant message to append to the conversation unchanged (keeps the template append-only). */
  message: ChatMessage;
  /** `message.content` as a string ("" when the model only called tools). */
  text: string;
  /** Tool calls the model made ([] when none). */
  toolCalls: ToolCall[];
  /** `stop`, `length`, `tool_calls`, … as the engine reported it. */
  finishReason: string | null;
}
