/**
 * @module A runner agent's claim queue (one shard) as its class and the runners' routes use it.
 * Which shard a rollout is offered on: src/runtime/object-names.ts.
 */
export type { ClaimQueueApi } from "./claim-queue-api";
export { ClaimQueueCore, type TakenOffer } from "./claim-queue-core";
