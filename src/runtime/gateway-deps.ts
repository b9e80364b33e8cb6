/** @module The gateway as the Worker builds it from its bindings (one place for the driver and the HTTP routes). */
import { objects } from "../src/runtime/objects/object-directory";
import {
  backendRegistry,
  defaultBackendDeps,
  resolveBackend,
  vllmServerConfig,
} from "../src/gateway/backends";
import { createGateway, type Gateway } from "../src/gateway/gateway";
import { upstreamTimeoutsFrom } from "../src/gateway/upstream-timeouts";
import type { AppEnv } from "./env";
import type { PolicyPort } from "../src/gateway/policy-port";

/**
 * The gateway for this invocation: admission from the rollouts' shards (or `policy`), backends
 * from the registry (cached per isolate, so replica health and stickiness survive across
 * invocations), and the deployment's `LLM_BASE_URL` server while the policy names no backend.
 */
export function gatewayFor(env: AppEnv, policy: PolicyPort = objects(env).admission()): Gateway {
  return createGateway({
    policy,
    backendFor: (config) =>
      resolveBackend(
        backendRegistry,
        config ?? vllmServerConfig(env.LLM_BASE_URL, env.LLM_API_KEY),
        defaultBackendDeps,
      ),
    defaultModel: env.LLM_MODEL,
    timeouts: upstreamTimeoutsFrom(env),
    now: () => Date.now(),
  });
}
