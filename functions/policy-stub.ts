/** @module Reaching the policy Durable Object (one instance, named "default") and the admission shards. */
import type { PolicyPort } from "../src/gateway/policy-port";
import { admissionShardCount, shardIndexOf, shardName } from "../src/runtime/policy/admission-fence";
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
