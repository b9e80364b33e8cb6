/** @module The ROLLOUT_WORK queue consumer: the stateless driver's entry point. */
import { r2Blobs } from "../durable-objects/r2-blobs";
import { createModelClient } from "../src/gateway/model-client";
import { rolloutKey } from "../src/gateway/rollout-keys";
import { driveRollout, type DriverDeps } from "../src/runtime/driver/drive-rollout";
import { INTERNAL_ORIGIN } from "../src/runtime/engines/llm-resource";
import { WorkMessage } from "../src/schemas/work-message";
import { agentRegistry } from "../src/sdk/agent-registry";
import { createApp } from "./app";
import { type AppEnv, gatewaySecret } from "./env";
import { gatewayFor } from "./gateway-deps";
import { policyStub } from "./policy-stub";
import { sessionLocator } from "./session-stub";
import { consumeEach } from "./queue-messages";

/** The Worker's HTTP app, for agents inside the Worker that call their rollout's gateway in-process. */
const app = createApp();

/** The driver's dependencies for one invocation, built from the Worker's bindings. */
export function driverDeps(env: AppEnv): DriverDeps {
  return {
    sessions: sessionLocator(env),
    resolveAgent: (name) => agentRegistry.get(name),
    model: createModelClient(gatewayFor(env)),
    now: () => Date.now(),
    driverId: `driver-${crypto.randomUUID()}`,
    newId: () => crypto.randomUUID().slice(0, 8),
    inWorker: {
      gateway: {
        origin: (env.PUBLIC_URL || INTERNAL_ORIGIN).replace(/\/+$/, ""),
        // The same routes an external agent calls, without a network hop: calls are recorded alike.
        fetch: async (request) => app.fetch(request, env),
        keyFor: (rolloutId) => rolloutKey(gatewaySecret(env), rolloutId),
      },
      resources: policyStub(env),
      artifacts: r2Blobs(env.TRAJECTORIES),
    },
  };
}

/**
 * Drives every message's rollout concurrently (a batch is at most 6, the number of model calls
 * one invocation can have in flight in production). A malformed message is acknowledged and
 * logged, never retried forever; an unexpected failure is retried by the queue (bounded by
 * max_retries), and the session's watchdog covers anything the queue gives up on.
 */
export async function handleWorkBatch(batch: MessageBatch<unknown>, env: AppEnv): Promise<void> {
  const deps = driverDeps(env);
  await consumeEach(batch, WorkMessage, "work", async (work) => {
    await driveRollout(deps, work.rollout_id);
  });
}
