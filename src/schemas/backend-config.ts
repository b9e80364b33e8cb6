/** @module Inference backend configurations, one schema per built-in backend. */
import { z } from "zod";

const ServerUrl = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" });

/** How the `vllm` backend picks a replica (docs/scale.md, "Replica routing"). */
export const RoutingPolicyName = z.enum(
  ["hash", "prefix_hash", "least_loaded", "sticky_least_loaded"],
  { error: 'policy must be "hash", "prefix_hash", "least_loaded" or "sticky_least_loaded"' },
);
export type RoutingPolicyName = z.infer<typeof RoutingPolicyName>;

/** The default routing policy: the winner of `npm run bench:routing` (docs/scale.md). */
export const DEFAULT_ROUTING_POLICY: RoutingPolicyName = "sticky_least_loaded";

/**
 * The default bound of `sticky_least_loaded`: two GRPO groups' worth of calls (n = 8), so a group
 * arriving at once lands whole even beside another group's burst; `bench:routing` measured 16
 * ahead of 8 (rollouts left their cache less often) and of 32 (load spread wider).
 */
export const DEFAULT_ROUTING_BOUND = 16;

/**
 * Replica routing. `hash`: rendezvous hash of the rollout id with bounded load (`load_factor`),
 * sticky per rollout. `prefix_hash`: every call to the replica that owns the first 8,192
 * characters of its prompt's shared prefix on a consistent-hash ring (no load bound).
 * `least_loaded`: every call to the replica with the fewest calls in flight.
 * `sticky_least_loaded`: a rollout stays on its replica unless that replica carries more than
 * `bound` calls in flight beyond the least-loaded one; a new rollout goes to the replica its
 * prompt's prefix hashes to (so a GRPO group, which shares its prompt, lands together) under the
 * same bound, else to the least-loaded one.
 */
export const ReplicaRouting = z
  .object({
    policy: RoutingPolicyName.default(DEFAULT_ROUTING_POLICY),
    /** `sticky_least_loaded` only: calls in flight a replica may carry beyond the least-loaded one before rollouts leave it. Default 16. */
    bound: z
      .number({ error: "bound must be a finite number" })
      .min(0, "bound must be >= 0")
      .default(DEFAULT_ROUTING_BOUND),
  })
  .strict();
export type ReplicaRouting = z.infer<typeof ReplicaRouting>;

/** One or more vLLM servers (OpenAI-compatible, with `return_token_ids`); each rollout sticks to one. */
export const VllmBackendConfig = z
  .object({
    name: z.literal("vllm"),
    /** Server URLs (with or without a trailing /v1). */
    replicas: z.array(ServerUrl).min(1, "replicas must list at least one server"),
    api_key: z.string().optional(),
    /** Bounded-load factor: a replica is skipped for a new rollout while it carries more than this × the mean load. Default 1.25. */
    load_factor: z.number().min(1, "load_factor must be >= 1").default(1.25),
    /** Replica routing; absent = `{ policy: "sticky_least_loaded", bound: 16 }`. */
    routing: ReplicaRouting.optional(),
  })
  .strict();
export type VllmBackendConfig = z.infer<typeof VllmBackendConfig>;

/** vLLM prefill/decode disaggregation: a prefill pool and a decode pool, as vLLM's disagg proxy drives them. */
export const VllmPdBackendConfig = z
  .object({
    name: z.literal("vllm_pd"),
    prefill: z.array(ServerUrl).min(1, "prefill must list at least one server"),
    decode: z.array(ServerUrl).min(1, "decode must list at least one server"),
    api_key: z.string().optional(),
  })
  .strict();
export type VllmPdBackendConfig = z.infer<typeof VllmPdBackendConfig>;

/** Agent-lightning calls the server URL `endpoint` (its `LLM` resource); read it as `base_url`, refusing both at once. */
function endpointAsBaseUrl(value: unknown): unknown {
  if (
    typeof value !== "object" ||
    value === null ||
    Array.isArray(value) ||
    !("endpoint" in value) ||
    "base_url" in value
  )
    return value;
  const { endpoint, ...rest } = value as Record<string, unknown>;
  return { ...rest, base_url: endpoint };
}

/**
 * Any OpenAI-compatible server. It returns no token ids, so its calls are untrainable (evaluation
 * only). The URL may be given as `base_url` or, as Agent-lightning's `LLM` names it, `endpoint`.
 */
export const OpenAiBackendConfig = z.preprocess(
  endpointAsBaseUrl,
  z
    .object({
      name: z.literal("openai"),
      base_url: ServerUrl,
      api_key: z.string().optional(),
    })
    .strict(),
);
export type OpenAiBackendConfig = z.infer<typeof OpenAiBackendConfig>;

/** A backend configuration: `name` selects the registered backend, which validates the rest. */
export const BackendConfig = z.looseObject({
  name: z.string().min(1, "name must name a registered backend"),
});
export type BackendConfig = z.infer<typeof BackendConfig>;
