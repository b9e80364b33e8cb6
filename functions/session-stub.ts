/** @module Reaching a rollout's Durable Object by rollout id. */
import type { RolloutSession } from "../durable-objects/rollout-session";
import type { SessionLocator } from "../src/runtime/session/session-handle";
import type { AppEnv } from "./env";
import type { RpcSurface } from "../src/rpc-surface";

/** The RPC surface of a RolloutSession stub, derived from the class (it satisfies the driver's SessionHandle). */
export type SessionRpc = RpcSurface<RolloutSession>;

/** The RolloutSession stub for `rolloutId` (one object per rollout, named by its id). */
export function sessionStub(env: AppEnv, rolloutId: string): SessionRpc {
  const namespace = env.ROLLOUT_SESSION;
  return namespace.get(namespace.idFromName(rolloutId)) as unknown as SessionRpc;
}

/** A locator the driver uses; the stub's RPC methods are the SessionHandle. */
export function sessionLocator(env: AppEnv): SessionLocator {
  return { get: (rolloutId) => sessionStub(env, rolloutId) };
}
