/** @module vLLM's `/tokenize` for chats: exact prompt lengths and rendered prompt ids, remembering servers that do not have it. */
import { ModelError } from "../../errors";
import type { JsonObject } from "../../schemas/json";
import { VllmTokenizeResponse } from "../../schemas/vllm-chat";
import { postUpstreamJson } from "./upstream-call";

/** Counts a chat request's prompt tokens on the server at `root`; null when it cannot tell. */
export type TokenCounter = (
  root: string,
  body: JsonObject,
  signal?: AbortSignal,
  timeoutMs?: number,
) => Promise<number | null>;

/**
 * Renders a chat request's messages with the server's template at `root` (with or without the
 * generation prompt) to token ids; null when it cannot.
 */
export type ChatRenderer = (
  root: string,
  body: JsonObject,
  addGenerationPrompt: boolean,
  signal?: AbortSignal,
  timeoutMs?: number,
) => Promise<number[] | null>;

/**
 * `/tokenize` (vLLM serves it at the root, not under /v1) for chat bodies. A server that answers
 * 404/405 is remembered and not asked again; other failures answer null and are asked again next
 * time. The memory is per backend instance, hence per isolate.
 */
export function createChatTokenizer(
  fetcher: typeof fetch,
  apiKey: string | undefined,
): { count: TokenCounter; render: ChatRenderer } {
  const unsupported = new Set<string>();
  async function tokenize(
    root: string,
    body: JsonObject,
    addGenerationPrompt: boolean,
    signal?: AbortSignal,
    timeoutMs?: number,
  ): Promise<VllmTokenizeResponse | null> {
    if (unsupported.has(root)) return null;
    const request: JsonObject = { add_generation_prompt: addGenerationPrompt };
    for (const key of ["model", "messages", "tools"] as const)
      if (body[key] !== undefined) request[key] = body[key];
    // The template's own switches (Qwen3's enable_thinking) render the same prompt the chat call would.
    if (body.chat_template_kwargs !== undefined)
      request.chat_template_kwargs = body.chat_template_kwargs;
    try {
      const reply = VllmTokenizeResponse.safeParse(
        await postUpstreamJson(fetcher, `${root}/tokenize`, request, { apiKey, signal, timeoutMs }),
      );
      return reply.success ? reply.data : null;
    } catch (error) {
      if (
        error instanceof ModelError &&
        (error.upstreamStatus === 404 || error.upstreamStatus === 405)
      )
        unsupported.add(root);
      return null;
    }
  }
  return {
    count: async (root, body, signal, timeoutMs) =>
      (await tokenize(root, body, true, signal, timeoutMs))?.count ?? null,
    render: async (root, body, addGenerationPrompt, signal, timeoutMs) =>
      (await tokenize(root, body, addGenerationPrompt, signal, timeoutMs))?.tokens ?? null,
  };
}
