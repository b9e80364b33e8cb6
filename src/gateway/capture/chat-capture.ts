/** @module Capturing a non-streaming chat completion. */
import { ModelError } from "../../errors";
import type { ChatMessage, ToolCall } from "../../schemas/chat";
import { VllmChatCompletion } from "../../schemas/vllm-chat";
import { type CapturedOutput, completeCapture } from "./captured-output";

/** The assistant message to append to a conversation: content, tool calls and reasoning as returned. */
export function assistantMessage(content: string | null | undefined, toolCalls: ToolCall[], reasoning?: string | null): ChatMessage {
  const message: ChatMessage = { role: "assistant", content: content ?? (toolCalls.length > 0 ? null : "") };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning) message.reasoning_content = reasoning;
  return message;
}

/**
 * Validates a chat completion and keeps its token ids and logprobs. A reply that does not
 * validate is retryable: a truncated or garbled body is a transient upstream fault.
 */
export function captureChatCompletion(raw: unknown): CapturedOutput {
  const parsed = VllmChatCompletion.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ModelError(`upstream reply is not a chat completion: ${issue?.message ?? "invalid"} at ${issue?.path.join(".") ?? "?"}`, { retryable: true });
  }
  const reply = parsed.data;
  const choice = reply.choices[0]!;
  return completeCapture({
    response_message: assistantMessage(choice.message.content, choice.message.tool_calls ?? [], choice.message.reasoning_content),
    prompt_token_ids: reply.prompt_token_ids ?? [],
    completion_token_ids: choice.token_ids ?? [],
    logprobs: choice.logprobs?.content?.map((entry) => entry.logprob) ?? [],
    finish_reason: choice.finish_reason,
    usage: reply.usage ?? null,
  });
}
