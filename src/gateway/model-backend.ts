/** @module The seam between the recording client and a concrete inference server. */
import type { JsonObject } from "../schemas/json";

/** The OpenAI endpoints a backend forwards. */
export type UpstreamPath = "/chat/completions" | "/completions";

/** What a backend hands back for one non-streaming request. */
export interface BackendReply {
  /** The parsed JSON body (validated by the caller). */
  body: unknown;
  /** The body's text exactly as the server sent it, when the backend did not change it (passed on as is). */
  text?: string;
  /** Which replica answered (its base URL), for stickiness and the LlmCall record. */
  replica: string;
}

/** What a backend hands back for one streaming request: the upstream's SSE response (status 2xx). */
export interface BackendStream {
  response: Response;
  replica: string;
}

/** Per-request routing context. */
export interface BackendCallOptions {
  /** The rollout the call belongs to: backends with replicas pin a rollout to one (prefix-cache reuse). */
  rolloutId: string;
  /** The replica this rollout used last, if any: kept while it is healthy. */
  replicaHint?: string | null;
  /**
   * Headers every upstream request of the call carries (the sample key, sample-key.ts); vLLM
   * backends forward them, a hosted API's backend does not.
   */
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /**
   * One upstream attempt's deadline (see `attemptTimeoutMs`): a hung connection fails the attempt,
   * which the gateway retries on a fresh one. Absent: only `signal` bounds the call.
   */
  attemptTimeoutMs?: number;
}

/**
 * One inference backend (`vllm`, `vllm_pd`, `openai`, or a user's). Implementations throw
 * `ModelError` for transport or HTTP failures and decide `retryable` from the status alone.
 */
export interface ModelBackend {
  /** Registry name recorded on every LlmCall. */
  readonly name: string;
  /** Whether the server returns token ids and logprobs (vLLM does; plain OpenAI does not). */
  readonly returnsTokenIds: boolean;
  /** POSTs a non-streaming OpenAI body to `path`. */
  request(path: UpstreamPath, body: JsonObject, options: BackendCallOptions): Promise<BackendReply>;
  /** POSTs a streaming body (`stream: true`) and returns the open SSE response. */
  openStream(
    path: UpstreamPath,
    body: JsonObject,
    options: BackendCallOptions,
  ): Promise<BackendStream>;
  /** Exact prompt length of a chat request, or null when the server cannot tell. */
  countChatTokens?(body: JsonObject, options: BackendCallOptions): Promise<number | null>;
  /**
   * The chat's messages rendered by the server's template to token ids (vLLM's `/tokenize` with
   * `messages`), with or without the generation prompt; null when the server cannot. Token-exact
   * harness turns need it (src/gateway/turns/); a backend without it renders every turn whole.
   */
  renderChat?(
    body: JsonObject,
    addGenerationPrompt: boolean,
    options: BackendCallOptions,
  ): Promise<number[] | null>;
  /** Replica health as last observed (for `doctor` and tests). */
  health?(): Array<{ replica: string; healthy: boolean; in_flight: number }>;
}
