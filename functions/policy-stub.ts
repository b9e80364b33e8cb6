/** @module Reaching the policy Durable Object (one instance, named "default") and the admission shards. */
import type { PolicyPort } from "../src/gateway/policy-port";
import type { PolicyView } from "../src/runtime/policy/policy-api";
import { admissionShardCount, shardIndexOf, shardName, type AdmissionFence } from "../src/runtime/policy/admission-fence";
import type { ApplyResult } from "../src/runtime/policy/admission-shard-core";
import type { BeginSyncResult, EndSyncResult, GetResourceResult, PutResourceResult, ReleaseResult, UpdateResult, WaitIdleResult } from "../src/runtime/policy/policy-results";
import type { PolicyAdmission } from "../src/schemas/policy";
import type { RequestCounts } from "../durable-objects/request-counter";
import type { AppEnv } from "./env";

/** Name of the one PolicyStore instance: the policy is global to the deployment. */
export const POLICY_OBJECT_NAME = "default";

/**
 * The RPC surface of the PolicyStore stub, spelled out (as for sessions, the generic
 * `DurableObjectStub<T>` types are too deep for the compiler).
 */
export interface PolicyRpc {
  snapshot(): Promise<PolicyView>;
  fence(): Promise<AdmissionFence>;
  republish(): Promise<number>;
  update(patch: unknown): Promise<UpdateResult>;
  beginSync(requestedVersion?: number): Promise<BeginSyncResult>;
  waitIdle(timeoutMs: number): Promise<WaitIdleResult>;
  endSync(policyVersion: number): Promise<EndSyncResult>;
  putResource(name: string, value: unknown): Promise<PutResourceResult>;
  getResource(name: string, version?: number): Promise<GetResourceResult>;
  requestCounts(): Promise<RequestCounts>;
}

/** The RPC surface of one AdmissionShard stub. */
export interface AdmissionShardRpc {
  acquire(callId: string, ttlMs: number): Promise<PolicyAdmission>;
  release(callId: string): Promise<ReleaseResult>;
  apply(fence: AdmissionFence): Promise<ApplyResult>;
  inFlight(): Promise<number>;
  requestCounts(): Promise<RequestCounts>;
}

/** The PolicyStore stub. */
export function policyStub(env: AppEnv): PolicyRpc {
  const namespace = env.POLICY_STORE;
  return namespace.get(namespace.idFromName(POLICY_OBJECT_NAME)) as unknown as PolicyRpc;
}

/** Every admission shard's stub, by index. */
export function admissionShards(env: AppEnv): AdmissionShardRpc[] {
  const namespace = env.ADMISSION_SHARD;
  return Array.from({ length: admissionShardCount(env.ADMISSION_SHARDS) }, (_, k) => namespace.get(namespace.idFromName(shardName(k))) as unknown as AdmissionShardRpc);
}

/** The shard that admits `rolloutId`'s calls. */
export function admissionShardFor(env: AppEnv, rolloutId: string): AdmissionShardRpc {
  const namespace = env.ADMISSION_SHARD;
  const index = shardIndexOf(rolloutId, admissionShardCount(env.ADMISSION_SHARDS));
  return namespace.get(namespace.idFromName(shardName(index))) as unknown as AdmissionShardRpc;
}

/** Admission as the gateway sees it: each rollout's calls go to its own shard, never to the policy object. */
export function policyPort(env: AppEnv): PolicyPort {
  return {
    acquire: (rolloutId, callId, ttlMs) => admissionShardFor(env, rolloutId).acquire(callId, ttlMs),
    release: (rolloutId, callId) => admissionShardFor(env, rolloutId).release(callId),
  };
}
