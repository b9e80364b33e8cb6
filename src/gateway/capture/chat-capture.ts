/** @module Capturing a non-streaming chat completion. */
import { ModelError } from "../../errors";
import type { ChatMessage, ToolCall } from "../../schemas/chat";
import { VllmChatCompletion } from "../../schemas/vllm-chat";
import { type CapturedOutput, completeCapture } from "./captured-output";

/**
 * The reasoning a vLLM reply carries: `reasoning` (current vLLM) or `reasoning_content` (before
 * PR #27752); during the deprecation window both hold the same text, so it is taken once.
 */
export function replyReasoning(fields: {
  reasoning?: string | null | undefined;
  reasoning_content?: string | null | undefined;
}): string | null {
  return fields.reasoning ?? fields.reasoning_content ?? null;
}

/** The assistant message to append to a conversation: content, tool calls and reasoning as returned. */
export function assistantMessage(
  content: string | null | undefined,
  toolCalls: ToolCall[],
  reasoning?: string | null,
): ChatMessage {
  const message: ChatMessage = {
    role: "assistant",
    content: content ?? (toolCalls.length > 0 ? null : ""),
  };
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
    throw new ModelError(
      `upstream reply is not a chat completion: ${issue?.message ?? "invalid"} at ${issue?.path.join(".") ?? "?"}`,
      { retryable: true },
    );
  }
  const reply = parsed.data;
  // With n > 1 (served outside training mode only) the call records choice 0; usage counts them all.
  const choice = reply.choices.find((c) => c.index === 0) ?? reply.choices[0]!;
  return completeCapture({
    response_message: assistantMessage(
      choice.message.content,
      choice.message.tool_calls ?? [],
      replyReasoning(choice.message),
    ),
    prompt_token_ids: reply.prompt_token_ids ?? [],
    completion_token_ids: choice.token_ids ?? [],
    logprobs: choice.logprobs?.content?.map((entry) => entry.logprob) ?? [],
    completion_token_strs: choice.logprobs?.content?.map((entry) => entry.token),
    finish_reason: choice.finish_reason,
    ...(choice.stop_reason !== null && choice.stop_reason !== undefined
      ? { stop_reason: choice.stop_reason }
      : {}),
    usage: reply.usage ?? null,
  });
}
