/** @module Keeping every model request inside the rollout's prompt and response budgets. */
import type { ChatMessage, ToolDefinition } from "../schemas/chat";
import type { RolloutConfig } from "../schemas/rollout-config";

/** Chat-template glue per message (role markers, separators) is a handful of tokens; stay generous. */
const PER_MESSAGE_SLACK = 16;
/** Tool schemas are rendered into the system prompt with some fixed instructions around them. */
const TOOLS_SLACK = 512;

/** UTF-8 length of `text` without encoding it (this runs on every call, over every new message). */
function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    // 2 bytes below U+0800, 3 up to U+FFFF; a surrogate pair is 4 bytes for its 2 units.
    if (unit >= 0x80) bytes += unit < 0x800 || (unit >= 0xd800 && unit <= 0xdfff) ? 1 : 2;
  }
  return bytes;
}

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
  let bound = continues
    ? last.contextTokens + PER_MESSAGE_SLACK
    : tools.length > 0
      ? utf8Length(JSON.stringify(tools)) + TOOLS_SLACK
      : 0;
  for (const message of added) bound += utf8Length(JSON.stringify(message)) + PER_MESSAGE_SLACK;
  return bound;
}

/**
 * `max_tokens` for the next call: what remains of the trajectory's response budget, capped by
 * `max_tokens_per_call`. Zero means the budget is spent (the rollout ends MAX_RESPONSE_LENGTH).
 */
export function maxTokensForNextCall(
  config: Pick<RolloutConfig, "max_response_length" | "max_tokens_per_call">,
  completionTokensUsed: number,
): number {
  const remaining = Math.max(0, config.max_response_length - completionTokensUsed);
  return config.max_tokens_per_call === null
    ? remaining
    : Math.min(remaining, config.max_tokens_per_call);
}
