/** @module Exact prompt lengths from vLLM's `/tokenize`, remembering servers that do not have it. */
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
 * A counter that POSTs to `{root}/tokenize` (vLLM serves it at the root, not under /v1). A
 * server that answers 404/405 is remembered and not asked again; other failures return null
 * and are asked again next time. The memory is per backend instance, hence per isolate.
 */
export function createTokenCounter(
  fetcher: typeof fetch,
  apiKey: string | undefined,
): TokenCounter {
  const unsupported = new Set<string>();
  return async function countChatTokens(root, body, signal, timeoutMs) {
    if (unsupported.has(root)) return null;
    const request = {
      model: body.model,
      messages: body.messages,
      tools: body.tools,
      add_generation_prompt: true,
    };
    try {
      const reply = VllmTokenizeResponse.safeParse(
        await postUpstreamJson(fetcher, `${root}/tokenize`, request, { apiKey, signal, timeoutMs }),
      );
      return reply.success ? reply.data.count : null;
    } catch (error) {
      if (
        error instanceof ModelError &&
        (error.upstreamStatus === 404 || error.upstreamStatus === 405)
      )
        unsupported.add(root);
      return null;
    }
  };
}
