/** @module Reaching a shard of a runner agent's claim queue. */
import { claimQueueName } from "../src/runtime/claims/claim-shards";
import type { ClaimQueue } from "../durable-objects/claim-queue";
import type { AppEnv } from "./env";
import type { RpcSurface } from "../src/rpc-surface";

/** The RPC surface of a ClaimQueue stub, derived from the class. */
export type ClaimQueueRpc = RpcSurface<ClaimQueue>;

/** The ClaimQueue stub of shard `shard` of `agent`'s queue. */
export function claimQueueStub(env: AppEnv, agent: string, shard: number): ClaimQueueRpc {
  const namespace = env.CLAIM_QUEUE;
  return namespace.get(namespace.idFromName(claimQueueName(agent, shard))) as unknown as ClaimQueueRpc;
}
