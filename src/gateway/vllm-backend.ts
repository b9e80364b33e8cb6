/** @module A single vLLM (or vLLM-compatible) server as a ModelBackend. */
import { ModelError } from "../errors";
import type { JsonObject } from "../schemas/json";
import { VllmTokenizeResponse } from "../schemas/vllm-chat";
import { postJson } from "./http-json";
import type { BackendReply, BackendStream, ModelBackend, UpstreamPath } from "./model-backend";

/** Options of `createVllmBackend`. */
export interface VllmBackendOptions {
  /** OpenAI-style base URL ending in `/v1`, e.g. `http://127.0.0.1:8000/v1`. */
  baseUrl: string;
  apiKey?: string | undefined;
  /** Injected for tests and for Workers' service bindings. Default: global fetch. */
  fetch?: typeof fetch;
}

/** Builds a backend that talks to one vLLM server (`/v1/chat/completions`, `/tokenize`). */
export function createVllmBackend(options: VllmBackendOptions): ModelBackend {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  // vLLM serves /tokenize at the server root, not under /v1.
  const rootUrl = baseUrl.replace(/\/v1$/, "");
  const fetcher = options.fetch ?? ((input, init) => fetch(input, init));
  let tokenizeSupported = true;

  return {
    name: "vllm",
    returnsTokenIds: true,
    async request(path: UpstreamPath, body: JsonObject, { signal }): Promise<BackendReply> {
      const reply = await postJson(fetcher, `${baseUrl}${path}`, body, { apiKey: options.apiKey, signal });
      return { body: reply, replica: baseUrl };
    },
    async openStream(_path: UpstreamPath, _body: JsonObject): Promise<BackendStream> {
      throw new Error("streaming arrives with the replica-aware vllm backend");
    },
    async countChatTokens(body: JsonObject, { signal }): Promise<number | null> {
      if (!tokenizeSupported) return null;
      const request = { model: body.model, messages: body.messages, tools: body.tools, add_generation_prompt: true };
      try {
        const reply = VllmTokenizeResponse.safeParse(await postJson(fetcher, `${rootUrl}/tokenize`, request, { apiKey: options.apiKey, signal }));
        return reply.success ? reply.data.count : null;
      } catch (error) {
        // A server without /tokenize (404/405) is remembered; the prompt is then checked by the server itself.
        if (error instanceof ModelError && (error.upstreamStatus === 404 || error.upstreamStatus === 405)) tokenizeSupported = false;
        return null;
      }
    },
  };
}
