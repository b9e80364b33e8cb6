/** @module Keeping every model request inside the rollout's prompt and response budgets. */
import type { ChatMessage, ToolDefinition } from "../schemas/chat";
import type { RolloutConfig } from "../schemas/rollout-config";

const encoder = new TextEncoder();
/** Chat-template glue per message (role markers, separators) is a handful of tokens; stay generous. */
const PER_MESSAGE_SLACK = 16;
/** Tool schemas are rendered into the system prompt with some fixed instructions around them. */
const TOOLS_SLACK = 512;

/**
 * An upper bound on the prompt's token count, without a tokenizer. It relies on byte-level
 * tokenizers never producing more tokens than UTF-8 bytes: the previous call's exact
 * prompt + completion length, plus the bytes of every message added since (or of everything,
 * on the first call). Only when this bound exceeds the limit is the server asked to count.
 */
export function promptTokenUpperBound(
  messages: ChatMessage[],
  tools: ToolDefinition[],
  last: { contextTokens: number; contextMessages: number },
): number {
  const continues = last.contextMessages > 0 && messages.length >= last.contextMessages;
  const added = continues ? messages.slice(last.contextMessages) : messages;
  let bound = continues ? last.contextTokens + PER_MESSAGE_SLACK : tools.length > 0 ? encoder.encode(JSON.stringify(tools)).length + TOOLS_SLACK : 0;
  for (const message of added) bound += encoder.encode(JSON.stringify(message)).length + PER_MESSAGE_SLACK;
  return bound;
}

/**
 * `max_tokens` for the next call: what remains of the trajectory's response budget, capped by
 * `max_tokens_per_call`. Zero means the budget is spent (the rollout ends MAX_RESPONSE_LENGTH).
 */
export function maxTokensForNextCall(config: Pick<RolloutConfig, "max_response_length" | "max_tokens_per_call">, completionTokensUsed: number): number {
  const remaining = Math.max(0, config.max_response_length - completionTokensUsed);
  return config.max_tokens_per_call === null ? remaining : Math.min(remaining, config.max_tokens_per_call);
}
