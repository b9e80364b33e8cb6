/** @module Inference backend configurations, one schema per built-in backend. */
import { z } from "zod";

const ServerUrl = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" });

/** One or more vLLM servers (OpenAI-compatible, with `return_token_ids`); each rollout sticks to one. */
export const VllmBackendConfig = z.object({
  name: z.literal("vllm"),
  /** Server URLs (with or without a trailing /v1). */
  replicas: z.array(ServerUrl).min(1, "replicas must list at least one server"),
  api_key: z.string().optional(),
  /** Bounded-load factor: a replica is skipped for a new rollout while it carries more than this × the mean load. Default 1.25. */
  load_factor: z.number().min(1, "load_factor must be >= 1").default(1.25),
}).strict();
export type VllmBackendConfig = z.infer<typeof VllmBackendConfig>;

/** vLLM prefill/decode disaggregation: a prefill pool and a decode pool, as vLLM's disagg proxy drives them. */
export const VllmPdBackendConfig = z.object({
  name: z.literal("vllm_pd"),
  prefill: z.array(ServerUrl).min(1, "prefill must list at least one server"),
  decode: z.array(ServerUrl).min(1, "decode must list at least one server"),
  api_key: z.string().optional(),
}).strict();
export type VllmPdBackendConfig = z.infer<typeof VllmPdBackendConfig>;

/** Agent-lightning calls the server URL `endpoint` (its `LLM` resource); read it as `base_url`, refusing both at once. */
function endpointAsBaseUrl(value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value) || !("endpoint" in value) || "base_url" in value) return value;
  const { endpoint, ...rest } = value as Record<string, unknown>;
  return { ...rest, base_url: endpoint };
}

/**
 * Any OpenAI-compatible server. It returns no token ids, so its calls are untrainable (evaluation
 * only). The URL may be given as `base_url` or, as Agent-lightning's `LLM` names it, `endpoint`.
 */
export const OpenAiBackendConfig = z.preprocess(endpointAsBaseUrl, z.object({
  name: z.literal("openai"),
  base_url: ServerUrl,
  api_key: z.string().optional(),
}).strict());
export type OpenAiBackendConfig = z.infer<typeof OpenAiBackendConfig>;

/** A backend configuration: `name` selects the registered backend, which validates the rest. */
export const BackendConfig = z.looseObject({ name: z.string().min(1, "name must name a registered backend") });
export type BackendConfig = z.infer<typeof BackendConfig>;
