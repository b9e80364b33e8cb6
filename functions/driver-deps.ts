/** @module The stateless driver's dependencies, built from the Worker's bindings (one place for the drive route and tests). */
import { objects } from "../src/runtime/objects";
import { r2Blobs } from "../src/sink/publication";
import {
  createModelClient,
  releaseOnNextAdmission,
  rolloutKey,
  type ReleasingPolicyPort,
} from "../src/gateway";
import type { DriverDeps } from "../src/runtime/driver";
import { INTERNAL_ORIGIN } from "../src/runtime/engines";
import { agentRegistry } from "../src/sdk";
import { createApp } from "./app";
import { type AppEnv, gatewaySecret } from "./env";
import { gatewayFor } from "../src/runtime";

/** The Worker's HTTP app, for agents inside the Worker that call their rollout's gateway in-process. */
const app = createApp();

/**
 * The driver's dependencies for one invocation, built from the Worker's bindings; `shards` is how
 * its admissions reach the rollouts' shards (tests pass one that records what it is asked), and
 * `releaseGraceMs` how long a call's release waits for the next admission (default
 * RELEASE_GRACE_MS; a test that counts requests widens it so a loaded machine cannot split them).
 */
export function driverDeps(
  env: AppEnv,
  shards: ReleasingPolicyPort = objects(env).admission(),
  releaseGraceMs?: number,
): DriverDeps {
  const dir = objects(env);
  return {
    sessions: { get: dir.session },
    resolveAgent: (name) => agentRegistry.get(name),
    // One drive's calls: each call's release rides on the rollout's next admission.
    // With DRIVER_INTERRUPTIBLE_CALLS=on, plain calls register their interrupt with their session, so an `interrupt` sync cuts them too.
    model: createModelClient(
      gatewayFor(env, releaseOnNextAdmission(shards, releaseGraceMs)),
      env.DRIVER_INTERRUPTIBLE_CALLS !== "on"
        ? undefined
        : (rolloutId, callId) => {
            // One stub per call: RPC calls on one stub arrive in order (a leg's registration before its drop).
            const session = dir.session(rolloutId);
            return (interrupt, legVersion) =>
              void session
                .remoteCallInterrupt(callId, interrupt, legVersion)
                .catch(() => undefined);
          },
    ),
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
      resources: { getResource: (name, rolloutId) => dir.shard(rolloutId).resource(name) },
      artifacts: r2Blobs(env.TRAJECTORIES),
    },
  };
}
