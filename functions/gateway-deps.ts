/** @module The gateway as the Worker builds it from its bindings (one place for the driver and the HTTP routes). */
import { backendRegistry, defaultBackendDeps, resolveBackend, vllmServerConfig } from "../src/gateway/backends";
import { createGateway, type Gateway } from "../src/gateway/gateway";
import { upstreamTimeoutsFrom } from "../src/gateway/upstream-timeouts";
import type { AppEnv } from "./env";
import { policyPort } from "./policy-stub";

/**
 * The gateway for this invocation: admission and policy from the PolicyStore object, backends
 * from the registry (cached per isolate, so replica health and stickiness survive across
 * invocations), and the deployment's `LLM_BASE_URL` server while the policy names no backend.
 */
export function gatewayFor(env: AppEnv): Gateway {
  return createGateway({
    policy: policyPort(env),
    backendFor: (config) => resolveBackend(backendRegistry, config ?? vllmServerConfig(env.LLM_BASE_URL, env.LLM_API_KEY), defaultBackendDeps),
    defaultModel: env.LLM_MODEL,
    timeouts: upstreamTimeoutsFrom(env),
    now: () => Date.now(),
  });
}
