/** @module The gateway as the Worker builds it from its bindings (one place for the driver and the HTTP routes). */
import { objects, type ObjectBindings } from "./objects/object-directory";
import {
  backendRegistry,
  defaultBackendDeps,
  resolveBackend,
  vllmServerConfig,
} from "../gateway/backends";
import { createGateway, DEFAULT_POLICY, type Gateway } from "../gateway/gateway";
import { upstreamTimeoutsFrom } from "../gateway/upstream-timeouts";
import type { ModelBackend } from "../gateway/model-backend";
import type { PolicyPort } from "../gateway/policy-port";
import type { BackendConfig } from "../schemas/backend-config";
import type { JsonObject } from "../schemas/json";
import type { OnlineAssignment } from "../schemas/online";

/** The bindings the gateway is built from: the objects, the deployment's model server, its timeouts. */
export type GatewayBindings = ObjectBindings & {
  LLM_BASE_URL: string;
  LLM_API_KEY?: string;
  LLM_MODEL: string;
  UPSTREAM_FIRST_BYTE_TIMEOUT_MS?: string;
  UPSTREAM_MS_PER_TOKEN?: string;
};

/** The backend of a policy's backend config, the deployment's `LLM_BASE_URL` server while it names none (cached per isolate). */
function backendFor(env: GatewayBindings, config: BackendConfig | null): ModelBackend {
  return resolveBackend(
    backendRegistry,
    config ?? vllmServerConfig(env.LLM_BASE_URL, env.LLM_API_KEY),
    defaultBackendDeps,
  );
}

/**
 * The gateway for this invocation: admission from the rollouts' shards (or `policy`), backends
 * from the registry (cached per isolate, so replica health and stickiness survive across
 * invocations), and the deployment's `LLM_BASE_URL` server while the policy names no backend.
 */
export function gatewayFor(
  env: GatewayBindings,
  policy: PolicyPort = objects(env).admission(),
): Gateway {
  return createGateway({
    policy,
    backendFor: (config) => backendFor(env, config),
    defaultModel: env.LLM_MODEL,
    timeouts: upstreamTimeoutsFrom(env),
    now: () => Date.now(),
  });
}

/**
 * Admission for an online session's calls (docs/online.md): its assigned serving version and that
 * version's replica pool, always admitted. Serving is outside the training fence: no admission
 * shard, no policy object, so a weight sync never answers a live user 429 "syncing", and the call
 * reaches no deployment-wide object.
 */
export function servingPort(assignment: OnlineAssignment): PolicyPort {
  const admission = {
    ok: true as const,
    policy_version: assignment.version,
    model: assignment.serving.model,
    backend: assignment.serving.backend,
    sampling: DEFAULT_POLICY.sampling,
  };
  const released = { policy_version: assignment.version };
  return {
    acquire: async () => admission,
    release: async () => released,
    releasedAll: () => true,
  };
}

/**
 * A chat request's prompt length on the policy's backend (its `/tokenize`), the model the policy
 * serves whatever the caller named: Anthropic's `count_tokens` for a harness. Null when the server
 * cannot tell.
 */
export async function countChatTokensFor(
  env: GatewayBindings,
  rolloutId: string,
  chat: JsonObject,
): Promise<number | null> {
  const { snapshot } = await objects(env).policy().fence();
  const backend = backendFor(env, snapshot.backend);
  if (!backend.countChatTokens) return null;
  return backend.countChatTokens(
    { ...chat, model: snapshot.model ?? env.LLM_MODEL },
    { rolloutId },
  );
}
