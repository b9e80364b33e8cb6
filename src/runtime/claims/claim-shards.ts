/** @module How a runner agent's claim queue is split into Durable Object shards. */
import { fnv1a32 } from "../../fnv1a";

/**
 * Shards per runner agent. A Durable Object serves about 1,000 requests per second; each attempt
 * costs its shard about three (offer, take, settle) and an idle runner's poll one per shard it
 * visits, so eight shards leave room for about 2,600 attempts per second for one agent name. Heartbeats,
 * model calls and outcomes never touch the queue: they go to the rollout's own session.
 */
export const CLAIM_SHARDS = 8;

/** The shard a rollout is always offered on (so a re-offer replaces its earlier offer). */
export function shardOf(rolloutId: string): number {
  return fnv1a32(rolloutId) % CLAIM_SHARDS;
}

/** The Durable Object name of one shard of `agent`'s claim queue. */
export function claimQueueName(agent: string, shard: number): string {
  return `${agent}#${shard}`;
}

/** Every shard once, starting at a random one, so concurrent runners spread over the shards. */
export function shardVisitOrder(random: () => number = Math.random): number[] {
  const start = Math.floor(random() * CLAIM_SHARDS);
  return Array.from({ length: CLAIM_SHARDS }, (_, offset) => (start + offset) % CLAIM_SHARDS);
}
