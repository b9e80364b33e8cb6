/**
 * @module The `vllm` backend: N vLLM servers, each rollout kept on one (prefix-cache reuse) by
 * its routing policy (default `sticky_least_loaded`), unhealthy replicas routed around. Routing
 * state (health, in-flight counts, remembered assignments) lives in the instance, i.e. per isolate.
 */
import type { JsonObject } from "../../schemas/json";
import {
  DEFAULT_ROUTING_BOUND,
  DEFAULT_ROUTING_POLICY,
  type ReplicaRouting,
  VllmBackendConfig,
} from "../../schemas/backend-config";
import type { ModelBackend } from "../model-backend";
import { type BackendDeps, type BackendFactory, parseBackendConfig } from "./backend-registry";
import { prefixKey } from "./prefix-key";
import { callOnReplica, openOnReplica } from "./replica-call";
import { createReplicaPool } from "./replica-pool";
import type { HealthTiming } from "./replica-state";
import { createChatTokenizer } from "./token-counter";
import { postUpstreamReply, sendUpstream } from "./upstream-call";

/** Options of `createVllmBackend`: either one server (`baseUrl`) or a list (`replicas`). */
export type VllmBackendOptions = (
  { baseUrl: string; replicas?: undefined } | { replicas: readonly string[]; baseUrl?: undefined }
) & {
  apiKey?: string | undefined;
  /** Bounded-load factor of the `hash` policy (>= 1). Default 1.25. */
  loadFactor?: number;
  /** Routing policy. Default `{ policy: "sticky_least_loaded", bound: 16 }`. */
  routing?: Partial<ReplicaRouting>;
  /** Default: global fetch. */
  fetch?: typeof fetch;
  /** Default: Date.now. */
  now?: () => number;
};

/** The default single-server config for a URL: the Worker's backend when the policy names none (`LLM_BASE_URL`). */
export function vllmServerConfig(baseUrl: string, apiKey?: string): VllmBackendConfig {
  return {
    name: "vllm",
    replicas: [baseUrl],
    load_factor: 1.25,
    ...(apiKey ? { api_key: apiKey } : {}),
  };
}

/** Builds the `vllm` backend from a validated config. `timing` overrides health cooldowns (tests). */
export function buildVllmBackend(
  config: VllmBackendConfig,
  deps: BackendDeps,
  timing?: Partial<HealthTiming>,
): ModelBackend {
  const apiKey = config.api_key;
  const routing = config.routing ?? {
    policy: DEFAULT_ROUTING_POLICY,
    bound: DEFAULT_ROUTING_BOUND,
  };
  const router = createReplicaPool("replicas", config.replicas, deps, {
    apiKey,
    loadFactor: config.load_factor,
    timing,
    routing,
  });
  const tokenizer = createChatTokenizer(deps.fetch, apiKey);
  const countTokens = tokenizer.count;
  return {
    name: "vllm",
    returnsTokenIds: true,
    async request(path, body, { rolloutId, replicaHint, signal, attemptTimeoutMs, headers }) {
      const lease = await router.acquire(rolloutId, replicaHint, (maxChars) =>
        prefixKey(body, maxChars),
      );
      const reply = await callOnReplica(lease, signal, () =>
        postUpstreamReply(deps.fetch, `${lease.url}${path}`, body, {
          apiKey,
          signal,
          headers,
          timeoutMs: attemptTimeoutMs,
        }),
      );
      return { ...reply, replica: lease.url };
    },
    async openStream(path, body, { rolloutId, replicaHint, signal, attemptTimeoutMs, headers }) {
      const lease = await router.acquire(rolloutId, replicaHint, (maxChars) =>
        prefixKey(body, maxChars),
      );
      const response = await openOnReplica(lease, signal, () =>
        sendUpstream(deps.fetch, `${lease.url}${path}`, body, {
          apiKey,
          signal,
          headers,
          timeoutMs: attemptTimeoutMs,
        }),
      );
      return { response, replica: lease.url };
    },
    countChatTokens(body: JsonObject, { rolloutId, replicaHint, signal, attemptTimeoutMs }) {
      return countTokens(router.peek(rolloutId, replicaHint).root, body, signal, attemptTimeoutMs);
    },
    renderChat(body, addGenerationPrompt, { rolloutId, replicaHint, signal, attemptTimeoutMs }) {
      const root = router.peek(rolloutId, replicaHint).root;
      return tokenizer.render(root, body, addGenerationPrompt, signal, attemptTimeoutMs);
    },
    health: () => router.health(),
  };
}

/**
 * Builds a `vllm` backend directly (the registry path is `backendRegistry.create(config, deps)`).
 * Throws InvalidInputError naming the field for a bad URL or load factor.
 *
 * @example
 * const single = createVllmBackend({ baseUrl: env.LLM_BASE_URL, apiKey: env.LLM_API_KEY });
 * const pool = createVllmBackend({ replicas: ["http://gpu-0:8000", "http://gpu-1:8000/v1"] });
 */
export function createVllmBackend(options: VllmBackendOptions): ModelBackend {
  const replicas = options.replicas ?? [options.baseUrl];
  const config = parseBackendConfig(VllmBackendConfig, {
    name: "vllm",
    replicas,
    ...(options.apiKey ? { api_key: options.apiKey } : {}),
    ...(options.loadFactor !== undefined ? { load_factor: options.loadFactor } : {}),
    ...(options.routing !== undefined ? { routing: options.routing } : {}),
  });
  const fetcher = options.fetch ?? ((input, init) => fetch(input, init));
  return buildVllmBackend(config, { fetch: fetcher, now: options.now ?? Date.now });
}

/** Registry entry of the `vllm` backend. */
export const vllmBackendFactory: BackendFactory<typeof VllmBackendConfig> = {
  schema: VllmBackendConfig,
  create: (config, deps) => buildVllmBackend(config, deps),
};
