/** @module One shard of a runner agent's claim queue, as typed RPC methods over ClaimQueueCore. */
import { DurableObject } from "cloudflare:workers";
import { ClaimQueueCore, type ClaimQueueApi, type TakenOffer } from "../src/runtime/claims";

/**
 * Offers of external rollouts to the runners of one agent, one shard of several (see
 * src/runtime/object-names.ts for why it is sharded and how shards are named).
 */
export class ClaimQueue extends DurableObject<Env> implements ClaimQueueApi {
  readonly #core: ClaimQueueCore;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#core = new ClaimQueueCore(ctx.storage.sql, () => Date.now());
  }

  /** Offers a rollout (idempotent; a re-offer makes it visible again). */
  offer(rolloutId: string): void {
    this.#core.offer(rolloutId);
  }

  /** Up to `max` visible offers, hidden while the caller claims them. */
  take(max: number): TakenOffer[] {
    return this.#core.take(max);
  }

  /** Drops offers whose claims settled. */
  settle(offers: TakenOffer[]): void {
    this.#core.settle(offers);
  }

  /** How many offers wait in this shard. */
  size(): { waiting: number; visible: number } {
    return this.#core.size();
  }
}
