/**
 * @module Inference backends: the registry, the built-ins (`vllm`, `vllm_pd`, `openai`), and a
 * per-isolate cache that keeps replica state alive between calls.
 */
import { BackendRegistry, type BackendDeps } from "./backend-registry";
import { openAiBackendFactory } from "./openai-compatible";
import { vllmPdBackendFactory } from "./vllm-pd";
import { vllmBackendFactory } from "./vllm-replicas";

export {
  BackendRegistry,
  parseBackendConfig,
  type BackendDeps,
  type BackendFactory,
  type ConfigIssue,
} from "./backend-registry";
export { resolveBackend, canonicalJson } from "./backend-cache";
export {
  createVllmBackend,
  buildVllmBackend,
  vllmBackendFactory,
  vllmServerConfig,
  type VllmBackendOptions,
} from "./vllm-replicas";
export { buildVllmPdBackend, vllmPdBackendFactory, prefillRequestBody } from "./vllm-pd";
export { buildOpenAiBackend, openAiBackendFactory, toPlainOpenAiBody } from "./openai-compatible";
export {
  ReplicaRouter,
  type ReplicaLease,
  type ReplicaHealth,
  type CallOutcome,
} from "./replica-router";
export { rendezvousOrder, rendezvousScore } from "./rendezvous";
export { replicaUrls, type ReplicaUrls } from "./replica-url";
export { fetchTokenTexts, type TokenTextSource } from "./token-texts";

/** A registry with the built-in backends registered: `vllm`, `vllm_pd`, `openai`. */
export function createDefaultBackendRegistry(): BackendRegistry {
  return new BackendRegistry()
    .register("vllm", vllmBackendFactory)
    .register("vllm_pd", vllmPdBackendFactory)
    .register("openai", openAiBackendFactory);
}

/** The registry the Worker resolves policy backends against; register custom backends here. */
export const backendRegistry = createDefaultBackendRegistry();

/**
 * The platform's own fetch and clock. fetch is called through a wrapper because Workers throws
 * "Illegal invocation" when the global fetch is called detached from its global.
 */
export const defaultBackendDeps: BackendDeps = {
  fetch: (input, init) => fetch(input, init),
  now: () => Date.now(),
};
