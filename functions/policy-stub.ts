/** @module Reaching the policy Durable Object (one instance, named "default") and the admission shards. */
import type { ReleasingPolicyPort } from "../src/gateway/release-on-next-admission";
import { admissionShardCount, shardIndexFor, shardName } from "../src/runtime/policy/admission-fence";
import type { AdmissionShard } from "../durable-objects/admission-shard";
import type { PolicyStore } from "../durable-objects/policy-store";
import type { AppEnv } from "./env";
import type { RpcSurface } from "../src/rpc-surface";

/** Name of the one PolicyStore instance: the policy is global to the deployment. */
export const POLICY_OBJECT_NAME = "default";

/** The RPC surface of the PolicyStore stub, derived from the class. */
export type PolicyRpc = RpcSurface<PolicyStore>;

/** The RPC surface of one AdmissionShard stub, derived from the class. */
export type AdmissionShardRpc = RpcSurface<AdmissionShard>;

/** The PolicyStore stub. */
export function policyStub(env: AppEnv): PolicyRpc {
  const namespace = env.POLICY_STORE;
  return namespace.get(namespace.idFromName(POLICY_OBJECT_NAME)) as unknown as PolicyRpc;
}

/**
 * Shard ids per namespace binding, kept for the isolate's life. An id is a plain value (unlike a
 * stub, which belongs to the request that made it), and every model call needs its shard's id
 * twice; deriving it by name each time was a measured cost per call.
 */
const shardIds = new WeakMap<AppEnv["ADMISSION_SHARD"], Map<number, DurableObjectId>>();

function shardStub(env: AppEnv, index: number): AdmissionShardRpc {
  const namespace = env.ADMISSION_SHARD;
  let ids = shardIds.get(namespace);
  if (!ids) shardIds.set(namespace, (ids = new Map()));
  let id = ids.get(index);
  if (!id) ids.set(index, (id = namespace.idFromName(shardName(index))));
  return namespace.get(id) as unknown as AdmissionShardRpc;
}

/** Every admission shard's stub, by index. */
export function admissionShards(env: AppEnv): AdmissionShardRpc[] {
  return Array.from({ length: admissionShardCount(env.ADMISSION_SHARDS) }, (_, k) => shardStub(env, k));
}

/** The shard that admits `rolloutId`'s calls. */
export function admissionShardFor(env: AppEnv, rolloutId: string): AdmissionShardRpc {
  return shardStub(env, shardIndexFor(rolloutId, env.ADMISSION_SHARDS));
}

/**
 * Admission as the gateway sees it: each rollout's calls go to its own shard, never to the policy
 * object. Made per request, so it keeps each shard's stub for the request's later calls (a stub
 * belongs to the request that made it): a drive's acquires and releases reuse one stub instead of
 * setting one up per RPC, a measured share of each call's CPU.
 */
export function policyPort(env: AppEnv): ReleasingPolicyPort {
  const stubs = new Map<number, AdmissionShardRpc>();
  const shardOf = (rolloutId: string) => {
    const index = shardIndexFor(rolloutId, env.ADMISSION_SHARDS);
    let stub = stubs.get(index);
    if (!stub) stubs.set(index, (stub = shardStub(env, index)));
    return stub;
  };
  return {
    acquire: (rolloutId, callId, ttlMs, releasing) => shardOf(rolloutId).acquire(callId, ttlMs, rolloutId, releasing),
    release: (rolloutId, callId) => shardOf(rolloutId).release(callId),
  };
}
