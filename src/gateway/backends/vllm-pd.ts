/**
 * @module The `vllm_pd` backend: prefill/decode disaggregation driven the way vLLM's disagg
 * proxy (tests/v1/kv_connector/nixl_integration/toy_proxy_server.py) drives a NixlConnector
 * pair. The prefill leg computes the KV cache with a 1-token, non-streaming request and returns
 * opaque `kv_transfer_params`; the decode leg is the original request plus those params, so
 * token ids, logprobs and the stream all come from the decode server.
 */
import type { JsonObject, JsonValue } from "../../schemas/json";
import { VllmPdBackendConfig } from "../../schemas/backend-config";
import type { BackendCallOptions, ModelBackend, UpstreamPath } from "../model-backend";
import type { BackendDeps, BackendFactory } from "./backend-registry";
import { callOnReplica, openOnReplica } from "./replica-call";
import { createReplicaPool } from "./replica-pool";
import type { HealthTiming } from "./replica-state";
import { createChatTokenizer } from "./token-counter";
import { postUpstreamJson, postUpstreamReply, sendUpstream } from "./upstream-call";

/** What the prefill leg asks for: "compute the KV cache and keep it for a remote decode". */
const PREFILL_KV_TRANSFER_PARAMS: JsonObject = {
  do_remote_decode: true,
  do_remote_prefill: false,
  remote_engine_id: null,
  remote_block_ids: null,
  remote_host: null,
  remote_port: null,
};

/**
 * The prefill leg's body: one token, no stream, no stream_options (vLLM rejects them without
 * a stream), and without min_tokens / min_completion_tokens, which a 1-token prefill cannot honour.
 */
export function prefillRequestBody(body: JsonObject): JsonObject {
  const {
    stream_options: _streamOptions,
    min_tokens: _minTokens,
    min_completion_tokens: _minCompletion,
    ...rest
  } = body;
  const prefill: JsonObject = {
    ...rest,
    stream: false,
    max_tokens: 1,
    kv_transfer_params: PREFILL_KV_TRANSFER_PARAMS,
  };
  if ("max_completion_tokens" in body) prefill.max_completion_tokens = 1;
  return prefill;
}

function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Builds the `vllm_pd` backend from a validated config; replica state is per instance (per isolate). */
export function buildVllmPdBackend(
  config: VllmPdBackendConfig,
  deps: BackendDeps,
  timing?: Partial<HealthTiming>,
): ModelBackend {
  const apiKey = config.api_key;
  // The config has no load factor for PD; the `vllm` default keeps the two pools' balance alike.
  const prefillPool = createReplicaPool("prefill", config.prefill, deps, {
    apiKey,
    loadFactor: 1.25,
    timing,
  });
  const decodePool = createReplicaPool("decode", config.decode, deps, {
    apiKey,
    loadFactor: 1.25,
    timing,
  });
  const tokenizer = createChatTokenizer(deps.fetch, apiKey);
  const countTokens = tokenizer.count;

  /**
   * Runs the prefill leg and returns the decode leg's body. Prefill replicas are chosen by the
   * rollout (no hint: the hint names a decode replica), so its prefix cache is reused too.
   * Like vLLM's proxy, a prefill reply without kv_transfer_params still goes on to decode,
   * which then recomputes the prompt itself.
   */
  async function prefill(
    path: UpstreamPath,
    body: JsonObject,
    options: BackendCallOptions,
    requestId: string,
  ): Promise<JsonObject> {
    const { rolloutId, signal, attemptTimeoutMs } = options;
    const lease = await prefillPool.acquire(rolloutId, null);
    const headers = { ...options.headers, "x-request-id": requestId };
    const reply = await callOnReplica(lease, signal, () =>
      postUpstreamJson(deps.fetch, `${lease.url}${path}`, prefillRequestBody(body), {
        apiKey,
        signal,
        headers,
        timeoutMs: attemptTimeoutMs,
      }),
    );
    const params: JsonValue | undefined = isJsonObject(reply)
      ? reply.kv_transfer_params
      : undefined;
    return isJsonObject(params) ? { ...body, kv_transfer_params: params } : body;
  }

  return {
    name: "vllm_pd",
    returnsTokenIds: true,
    async request(path, body, options) {
      // One request id on both legs, as vLLM's proxy sends it (X-Request-Id), so the engines' logs pair up.
      const requestId = crypto.randomUUID();
      const decodeBody = await prefill(path, body, options, requestId);
      const { signal } = options;
      const lease = await decodePool.acquire(options.rolloutId, options.replicaHint);
      const headers = { ...options.headers, "x-request-id": requestId };
      const reply = await callOnReplica(lease, signal, () =>
        postUpstreamReply(deps.fetch, `${lease.url}${path}`, decodeBody, {
          apiKey,
          signal,
          headers,
          timeoutMs: options.attemptTimeoutMs,
        }),
      );
      return { ...reply, replica: lease.url };
    },
    async openStream(path, body, options) {
      const requestId = crypto.randomUUID();
      const decodeBody = await prefill(path, body, options, requestId);
      const { signal } = options;
      const lease = await decodePool.acquire(options.rolloutId, options.replicaHint);
      const headers = { ...options.headers, "x-request-id": requestId };
      const response = await openOnReplica(lease, signal, () =>
        sendUpstream(deps.fetch, `${lease.url}${path}`, decodeBody, {
          apiKey,
          signal,
          headers,
          timeoutMs: options.attemptTimeoutMs,
        }),
      );
      return { response, replica: lease.url };
    },
    countChatTokens(body, { rolloutId, replicaHint, signal, attemptTimeoutMs }) {
      // Both pools serve the same model and template; the decode replica is the rollout's own.
      return countTokens(
        decodePool.peek(rolloutId, replicaHint).root,
        body,
        signal,
        attemptTimeoutMs,
      );
    },
    renderChat(body, addGenerationPrompt, { rolloutId, replicaHint, signal, attemptTimeoutMs }) {
      const root = decodePool.peek(rolloutId, replicaHint).root;
      return tokenizer.render(root, body, addGenerationPrompt, signal, attemptTimeoutMs);
    },
    health: () => [...prefillPool.health(), ...decodePool.health()],
  };
}

/** Registry entry of the `vllm_pd` backend. */
export const vllmPdBackendFactory: BackendFactory<typeof VllmPdBackendConfig> = {
  schema: VllmPdBackendConfig,
  create: (config, deps) => buildVllmPdBackend(config, deps),
};
