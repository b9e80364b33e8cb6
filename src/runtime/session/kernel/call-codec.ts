/**
 * @module How a recorded call is stored: against the call before it. A rollout's k-th call
 * usually re-sends the whole conversation so far, so storing every call whole grows storage with
 * calls × context. Instead a stored call keeps only what its predecessor does not already hold:
 * the prompt ids past the previous call's prompt + completion ids, and the request messages past
 * the previous request's messages + reply. Reading decodes the calls in order.
 */
import type { LlmCall } from "../../../schemas/llm-call";

/** What a stored call shares with the call stored just before it. */
export interface StoredPrefix {
  /** The call it was encoded against (the one stored just before it). */
  of: string;
  /** Leading prompt ids equal to that call's prompt + completion ids. */
  prompt_tokens: number;
  /** Leading request messages equal to that call's request messages + reply message. */
  messages: number;
}

/** A call as stored: the call with shared prefixes cut off, and what was cut. */
export type StoredCall = LlmCall & { stored_prefix?: StoredPrefix };

function commonPrefix<T>(
  values: readonly T[],
  base: readonly T[],
  same: (a: T, b: T) => boolean,
): number {
  const limit = Math.min(values.length, base.length);
  let n = 0;
  while (n < limit && same(values[n]!, base[n]!)) n++;
  return n;
}

function messagesOf(call: LlmCall): unknown[] | null {
  return Array.isArray(call.request.messages) ? call.request.messages : null;
}

/** `call` as stored after `previous` (the last call stored, decoded), or whole when there is none. */
export function encodeCall(call: LlmCall, previous: LlmCall | null): StoredCall {
  if (!previous) return call;
  const baseIds = [...previous.prompt_token_ids, ...previous.completion_token_ids];
  const promptTokens = commonPrefix(call.prompt_token_ids, baseIds, (a, b) => a === b);
  const messages = messagesOf(call);
  const previousMessages = messagesOf(previous);
  let sharedMessages = 0;
  if (messages && previousMessages) {
    const baseMessages = [...previousMessages, previous.response_message].map((message) =>
      JSON.stringify(message),
    );
    sharedMessages = commonPrefix(
      messages.map((message) => JSON.stringify(message)),
      baseMessages,
      (a, b) => a === b,
    );
  }
  if (promptTokens === 0 && sharedMessages === 0) return call;
  const request = messages
    ? { ...call.request, messages: messages.slice(sharedMessages) }
    : call.request;
  return {
    ...call,
    request,
    prompt_token_ids: call.prompt_token_ids.slice(promptTokens),
    stored_prefix: { of: previous.call_id, prompt_tokens: promptTokens, messages: sharedMessages },
  };
}

/** The call `stored` was, given `previous` decoded (the call stored just before it). */
export function decodeCall(stored: StoredCall, previous: LlmCall | null): LlmCall {
  const { stored_prefix: prefix, ...call } = stored;
  if (!prefix) return call;
  if (!previous || previous.call_id !== prefix.of)
    throw new Error(
      `stored call ${call.call_id} was encoded against ${prefix.of}, which is not the call before it`,
    );
  const baseIds = [...previous.prompt_token_ids, ...previous.completion_token_ids];
  const prompt_token_ids = [...baseIds.slice(0, prefix.prompt_tokens), ...call.prompt_token_ids];
  if (prefix.messages === 0) return { ...call, prompt_token_ids };
  const baseMessages = [...(messagesOf(previous) ?? []), previous.response_message];
  const messages = [...baseMessages.slice(0, prefix.messages), ...(messagesOf(call) ?? [])];
  return { ...call, prompt_token_ids, request: { ...call.request, messages } };
}
