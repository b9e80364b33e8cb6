/** @module The gateway as the Worker builds it from its bindings (one place for the driver and the HTTP routes). */
import { createGateway, type Gateway } from "../src/gateway/gateway";
import type { ModelBackend } from "../src/gateway/model-backend";
import { createVllmBackend } from "../src/gateway/vllm-backend";
import type { BackendConfig } from "../src/schemas/backend-config";
import type { AppEnv } from "./env";

/** Backends live per isolate so replica health and in-flight counts survive across invocations. */
const backends = new Map<string, ModelBackend>();

/** The deployment's default backend (`LLM_BASE_URL`) or the one a policy names. */
function backendFor(env: AppEnv, config: BackendConfig | null): ModelBackend {
  const key = config ? JSON.stringify(config) : `default:${env.LLM_BASE_URL}`;
  let backend = backends.get(key);
  if (!backend) {
    backend = createVllmBackend({ baseUrl: env.LLM_BASE_URL, apiKey: env.LLM_API_KEY });
    backends.set(key, backend);
  }
  return backend;
}

/** The gateway for this invocation. */
export function gatewayFor(env: AppEnv): Gateway {
  return createGateway({ policy: null, backendFor: (config) => backendFor(env, config), defaultModel: env.LLM_MODEL, now: () => Date.now() });
}
