/** @module What a ClaimQueue object (one shard of a runner agent's queue) offers over RPC: the interface the class implements and its stubs are typed by. */
import { methodNames } from "../../rpc-surface";
import type { TakenOffer } from "./claim-queue-core";

/** One shard of a runner agent's claim queue: external rollouts offered to its runners. */
export interface ClaimQueueApi {
  /** Offers a rollout (idempotent; a re-offer makes it visible again). */
  offer(rolloutId: string): void;
  /** Up to `max` visible offers, hidden while the caller claims them. */
  take(max: number): TakenOffer[];
  /** Drops offers whose claims settled. */
  settle(offers: TakenOffer[]): void;
  /** How many offers wait in this shard. */
  size(): { waiting: number; visible: number };
}

/** Every method of ClaimQueueApi, at run time. */
export const CLAIM_QUEUE_METHODS = methodNames<ClaimQueueApi>({
  offer: true,
  take: true,
  settle: true,
  size: true,
});
