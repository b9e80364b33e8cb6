/** @module A rollout's conversation, call by call, read off the recorded requests. */
import type { ChatMessage } from "../../schemas/chat";
import type { LlmCall } from "../../schemas/llm-call";

function requestMessages(call: LlmCall): ChatMessage[] | null {
  const messages = call.request.messages;
  return Array.isArray(messages) ? (messages as unknown as ChatMessage[]) : null;
}

/**
 * The messages a call added to the conversation: its request minus what the previous call sent and
 * received. When the prompt does not extend the previous one (history rewritten), all of it.
 */
export function newMessages(
  call: LlmCall,
  previous: LlmCall | undefined,
): { messages: ChatMessage[]; whole: boolean } {
  const messages = requestMessages(call) ?? [];
  const before = previous ? requestMessages(previous) : null;
  if (!previous || !before) return { messages, whole: false };
  const seen = before.length + 1;
  if (messages.length < seen) return { messages, whole: true };
  return { messages: messages.slice(seen), whole: false };
}
