/**
 * @module The OpenAI chat shapes the gateway writes itself instead of relaying the upstream's: a
 * continuation's completions chunks as chat chunks (resumable-stream.ts, stop-relay.ts), and the
 * chat completion answered from a recorded call (an assembled reply, a token-exact harness turn).
 * Written once, so the logprobs and chunk shapes cannot drift apart between those callers.
 */
import type { JsonObject } from "../schemas/json";
import type { LlmCall } from "../schemas/llm-call";

/** The chat chunk identity a continuation's chunks take (the first leg's). */
export interface ChunkHead {
  id: string;
  created: number;
  model: string;
}

/** The usage figures of the whole call so far. */
export interface CallCounts {
  promptTokens: number;
  completionTokens: number;
}

/** One choice of a vLLM completions chunk (a continuation leg's), as far as the rewrite reads it. */
export type CompletionChoice = {
  index?: number;
  text?: string;
  token_ids?: number[] | null;
  finish_reason?: string | null;
  stop_reason?: unknown;
  logprobs?: { token_logprobs?: Array<number | null> } | null;
};

/** OpenAI chat's `logprobs` object: one `content` entry per sampled token. */
export type ChatLogprobs = {
  content: Array<{ token: string; logprob: number; bytes: never[]; top_logprobs: never[] }>;
};

/**
 * The sampled tokens' logprobs as OpenAI chat's `logprobs`. Only the numbers are known (vLLM's
 * completions chunks and the record keep no token text), so `token`, `bytes` and `top_logprobs`
 * are left empty; a null logprob (vLLM's for a token it could not score) reads 0.
 */
export function chatLogprobs(logprobs: ReadonlyArray<number | null>): ChatLogprobs {
  return {
    content: logprobs.map((logprob) => ({
      token: "",
      logprob: logprob ?? 0,
      bytes: [],
      top_logprobs: [],
    })),
  };
}

/** The usage object of `counts`. */
export function usageOf(counts: CallCounts): {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
} {
  return {
    prompt_tokens: counts.promptTokens,
    completion_tokens: counts.completionTokens,
    total_tokens: counts.promptTokens + counts.completionTokens,
  };
}

/**
 * A completions choice as the chat choice the caller expects: `delta` its text already routed,
 * `ended` the `stop_reason` field when the caller's rewrite sets one (each sets it on its own rule).
 */
export function chatChoiceOf(
  choice: CompletionChoice,
  delta: Record<string, unknown>,
  ended: { stop_reason?: unknown },
): Record<string, unknown> {
  return {
    index: 0,
    delta,
    logprobs: choice.logprobs?.token_logprobs ? chatLogprobs(choice.logprobs.token_logprobs) : null,
    finish_reason: choice.finish_reason ?? null,
    ...ended,
    token_ids: choice.token_ids ?? null,
  };
}

/** One `chat.completion.chunk` of `head` as JSON text, with the call's usage when `usage` is given. */
export function chatChunk(head: ChunkHead, choices: unknown[], usage?: CallCounts): string {
  return JSON.stringify({
    id: head.id,
    object: "chat.completion.chunk",
    created: head.created,
    model: head.model,
    choices,
    ...(usage ? { usage: usageOf(usage) } : {}),
  });
}

/**
 * The chat completion of a recorded call, for a reply the upstream did not send in that shape.
 * `full` (default false) adds what vLLM's own chat reply carries beyond the translators' needs:
 * logprobs (null when the record has none), `stop_reason` and `prompt_token_ids`; the reply a
 * streamed call is assembled into has them, a token-exact harness turn's does not.
 */
export function chatCompletionOf(call: LlmCall, options: { full?: boolean } = {}): JsonObject {
  const full = options.full === true;
  const logprobs = call.logprobs.length > 0 ? chatLogprobs(call.logprobs) : null;
  return {
    id: `chatcmpl-${call.call_id.slice(call.call_id.lastIndexOf("/") + 1)}`,
    object: "chat.completion",
    created: Math.floor(call.created_at / 1000),
    // The record's request is the body sent upstream, which always names the policy's model.
    model: (call.request.model as string | undefined) ?? "",
    choices: [
      {
        index: 0,
        message: call.response_message as JsonObject,
        ...(full ? { logprobs } : {}),
        finish_reason: call.finish_reason,
        ...(full ? { stop_reason: call.stop_reason ?? null } : {}),
        token_ids: call.completion_token_ids,
      },
    ],
    usage: call.usage as unknown as JsonObject,
    ...(full ? { prompt_token_ids: call.prompt_token_ids } : {}),
  };
}

/**
 * A recorded chat call as one streamed answer (a chunk carrying the whole reply, then `[DONE]`):
 * what a caller retrying with the id of a call already recorded reads instead of a new generation.
 */
export function chatStreamOf(call: LlmCall): string {
  const whole = chatCompletionOf(call, { full: true });
  const [choice] = whole.choices as Array<Record<string, unknown>>;
  const message = choice!.message as Record<string, unknown>;
  const toolCalls = Array.isArray(message.tool_calls)
    ? { tool_calls: message.tool_calls.map((tool, index) => ({ index, ...(tool as object) })) }
    : {};
  const chunk = {
    ...whole,
    object: "chat.completion.chunk",
    choices: [{ ...choice, message: undefined, delta: { ...message, ...toolCalls } }],
  };
  return `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`;
}
