/** @module What the gateway keeps from one engine reply, whatever its endpoint or transport. */
import { ModelError } from "../../errors";
import type { ChatMessage } from "../../schemas/chat";
import type { Usage } from "../../schemas/llm-call";
import { logprobsAligned } from "../../schemas/training-tokens";

/** The engine's tokens and the answer they decode to. */
export interface CapturedOutput {
  response_message: ChatMessage;
  prompt_token_ids: number[];
  completion_token_ids: number[];
  /** One per completion token, or empty when the engine sent none. */
  logprobs: number[];
  /**
   * The engine's text of each completion token (vLLM's logprob `token`: the token decoded alone),
   * for people reading a sample; absent unless there is exactly one per completion token.
   */
  completion_token_strs?: string[];
  finish_reason: string | null;
  /** vLLM's `stop_reason`: the stop string or stop token id that ended the output; absent when none did. */
  stop_reason?: string | number;
  usage: Usage;
}

/**
 * Finishes a capture: checks that logprobs line up with the completion tokens (a mismatch is an
 * upstream fault, retryable, never stored) and fills usage from the token counts if absent.
 */
export function completeCapture(
  input: Omit<CapturedOutput, "usage"> & { usage?: Usage | null },
): CapturedOutput {
  let parts = input;
  if (parts.logprobs.length > 0 && !logprobsAligned(parts)) {
    throw new ModelError(
      `engine returned ${parts.logprobs.length} logprobs for ${parts.completion_token_ids.length} completion tokens`,
      { retryable: true },
    );
  }
  const { completion_token_strs: strs, ...rest } = parts;
  const aligned =
    strs !== undefined && strs.length > 0 && strs.length === parts.completion_token_ids.length;
  parts = aligned ? parts : rest;
  const usage = parts.usage ?? {
    prompt_tokens: parts.prompt_token_ids.length,
    completion_tokens: parts.completion_token_ids.length,
    total_tokens: parts.prompt_token_ids.length + parts.completion_token_ids.length,
  };
  return {
    ...parts,
    usage: {
      prompt_tokens: usage.prompt_tokens,
      completion_tokens: usage.completion_tokens,
      total_tokens: usage.total_tokens,
    },
  };
}
