/** @module What an agent receives from one model call. */
import type { ChatMessage, ToolCall } from "../schemas/chat";
import type { JsonValue } from "../schemas/json";
import { thoughtOf, toolCallAction } from "./reply-parts";

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
  /** The reasoning: `reasoning_content`, else the `<think>` text of the content (the seed's `thought`). */
  thought: string;
  /** The tool calls as the seed's `action`: parsed `tool_calls`, else the `<tool_call>` bodies in the content; null when none. */
  action: JsonValue[] | null;
}

/** The fields of a recorded call a ModelResponse is made from. */
export interface RecordedReply {
  response_message: ChatMessage;
  finish_reason: string | null;
}

/**
 * The response an agent sees for a recorded call: the same whether the call was just made or is
 * replayed from the session when a driver rebuilds the episode, so replay feeds the agent exactly
 * what it saw live.
 */
export function modelResponseFrom(record: RecordedReply): ModelResponse {
  const message = record.response_message;
  const text = typeof message.content === "string" ? message.content : "";
  return {
    message,
    text,
    toolCalls: message.tool_calls ?? [],
    finishReason: record.finish_reason,
    thought: thoughtOf(message),
    action: toolCallAction(message),
  };
}
