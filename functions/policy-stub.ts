/** @module Reaching the policy Durable Object (one instance, named "default"). */
import type { PolicyPort } from "../src/gateway/policy-port";
import type { PolicyView } from "../src/runtime/policy/policy-api";
import type { BeginSyncResult, EndSyncResult, GetResourceResult, PutResourceResult, UpdateResult, WaitIdleResult } from "../src/runtime/policy/policy-results";
import type { AppEnv } from "./env";

/** Name of the one PolicyStore instance: the policy is global to the deployment. */
export const POLICY_OBJECT_NAME = "default";

/**
 * The RPC surface of the PolicyStore stub, spelled out (as for sessions, the generic
 * `DurableObjectStub<T>` types are too deep for the compiler). It is also the gateway's PolicyPort.
 */
export interface PolicyRpc extends PolicyPort {
  snapshot(): Promise<PolicyView>;
  update(patch: unknown): Promise<UpdateResult>;
  beginSync(requestedVersion?: number): Promise<BeginSyncResult>;
  waitIdle(timeoutMs: number): Promise<WaitIdleResult>;
  endSync(policyVersion: number): Promise<EndSyncResult>;
  putResource(name: string, value: unknown): Promise<PutResourceResult>;
  getResource(name: string, version?: number): Promise<GetResourceResult>;
}

/** The PolicyStore stub. */
export function policyStub(env: AppEnv): PolicyRpc {
  const namespace = env.POLICY_STORE;
  return namespace.get(namespace.idFromName(POLICY_OBJECT_NAME)) as unknown as PolicyRpc;
}

/** The policy as the gateway sees it: admission and release around each model call. */
export function policyPort(env: AppEnv): PolicyPort {
  return policyStub(env);
}
