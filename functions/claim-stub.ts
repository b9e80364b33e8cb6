/** @module Reaching a shard of a runner agent's claim queue. */
import type { TakenOffer } from "../src/runtime/claims/claim-queue-core";
import { claimQueueName } from "../src/runtime/claims/claim-shards";
import type { AppEnv } from "./env";

/** The RPC surface of a ClaimQueue stub, spelled out (the generic stub types are too deep for the compiler). */
export interface ClaimQueueRpc {
  offer(rolloutId: string): Promise<void>;
  take(max: number): Promise<TakenOffer[]>;
  settle(offers: TakenOffer[]): Promise<void>;
  size(): Promise<{ waiting: number; visible: number }>;
}

/** The ClaimQueue stub of shard `shard` of `agent`'s queue. */
export function claimQueueStub(env: AppEnv, agent: string, shard: number): ClaimQueueRpc {
  const namespace = env.CLAIM_QUEUE;
  return namespace.get(namespace.idFromName(claimQueueName(agent, shard))) as unknown as ClaimQueueRpc;
}
