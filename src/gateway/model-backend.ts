/** @module The seam between the recording client and a concrete inference server. */
import type { JsonObject } from "../schemas/json";

/** What a backend hands back for one chat-completions request. */
export interface BackendReply {
  /** The parsed JSON body (validated by the caller). */
  body: unknown;
  /** Which replica answered (its base URL), for routing and the LlmCall record. */
  replica: string;
}

/**
 * One inference backend (`vllm` now; `vllm_pd` and `openai` plug in here). Implementations throw
 * `ModelError` for transport or HTTP failures and decide `retryable` from the status alone.
 */
export interface ModelBackend {
  /** Registry name recorded on every LlmCall. */
  readonly name: string;
  /** Whether the server returns token ids and logprobs (vLLM does; plain OpenAI does not). */
  readonly returnsTokenIds: boolean;
  /** POSTs an OpenAI chat-completions body. `rolloutId` lets a backend pin a rollout to one replica. */
  chatCompletions(body: JsonObject, options: { rolloutId: string; signal?: AbortSignal }): Promise<BackendReply>;
  /** Exact prompt length of a chat request, or null when the server cannot tell. */
  countChatTokens?(body: JsonObject, options: { rolloutId: string; signal?: AbortSignal }): Promise<number | null>;
}
