/**
 * @module The prompt prefix a call is placed by: a new rollout's under `sticky_least_loaded`,
 * every call's under `prefix_hash` (its first `PREFIX_HASH_CHARS`): the part of a request that
 * every member of a GRPO group shares and that the replica's prefix cache will hold once one of
 * them has been served.
 */
import type { JsonObject, JsonValue } from "../../schemas/json";
import { fnv1a32 } from "../../fnv1a";

/** Leading prompt tokens (or characters) a text-completions prefix is keyed by. */
const COMPLETION_PREFIX = 1024;

/**
 * Characters of the prefix `prefix_hash` keys a call by: about 2,000 tokens at English text's ~4
 * characters a token (128 KV blocks of 16), enough to pass a typical system prompt and reach the
 * task text that tells one GRPO group from another. Never past the end of the first user message
 * (`prefixKey`), so every later call of a multi-turn rollout, which appends to it, keeps its key.
 * A system prompt shared by every task and longer than this puts every call on one replica: the
 * known limit of fixed-length prefix hashing (sticky_least_loaded's bound spills instead).
 */
export const PREFIX_HASH_CHARS = 8192;

function firstUserIndex(messages: readonly JsonValue[]): number {
  const index = messages.findIndex(
    (message) =>
      typeof message === "object" &&
      message !== null &&
      !Array.isArray(message) &&
      message.role === "user",
  );
  return index < 0 ? messages.length - 1 : index;
}

/**
 * A short key for the request's shared prefix, or null when it has none to key by. Chat: the
 * tools and the messages up to the first user message (system prompt and task, which the
 * chat template renders first). Text completions: the first 1,024 prompt tokens or characters.
 * `maxChars` cuts the keyed text (JSON of tools and messages, or the prompt) to its first characters.
 */
export function prefixKey(body: JsonObject, maxChars = Number.POSITIVE_INFINITY): string | null {
  let text: string;
  if (Array.isArray(body.messages)) {
    const messages = body.messages;
    if (messages.length === 0) return null;
    text = JSON.stringify([body.tools ?? null, messages.slice(0, firstUserIndex(messages) + 1)]);
  } else if (typeof body.prompt === "string") {
    text = body.prompt.slice(0, COMPLETION_PREFIX);
  } else if (Array.isArray(body.prompt)) {
    text = body.prompt.slice(0, COMPLETION_PREFIX).join(",");
  } else {
    return null;
  }
  if (text.length > maxChars) text = text.slice(0, maxChars);
  // Two seeds: a 64-bit key, so unrelated prompts practically never share a placement by accident.
  return `prefix:${fnv1a32(text).toString(36)}:${fnv1a32(text, 0x01000193).toString(36)}`;
}
