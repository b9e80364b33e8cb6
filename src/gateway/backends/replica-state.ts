/**
 * @module One replica's health and load as this isolate has observed them. Nothing here is
 * shared between isolates: each Worker isolate learns health from its own calls and probes.
 */
import { replicaUrls } from "./replica-url";

/** Health timing. Defaults: 5 s first cooldown, doubling per failure up to 60 s; leases stop counting after 15 min. */
export interface HealthTiming {
  baseCooldownMs: number;
  maxCooldownMs: number;
  /**
   * A lease that never settles (its Worker invocation was cancelled, so no `finally` ran) stops
   * counting as in flight after this long; 15 min is a queue consumer's wall-time limit.
   */
  leaseTtlMs: number;
}

/** The defaults of `HealthTiming`. */
export const DEFAULT_HEALTH_TIMING: HealthTiming = { baseCooldownMs: 5_000, maxCooldownMs: 60_000, leaseTtlMs: 15 * 60_000 };

/** Mutable per-replica state, owned by a `ReplicaRouter`. */
export class ReplicaState {
  /** OpenAI base ending in `/v1`: the replica's name. */
  readonly url: string;
  /** Server root for `/health` and `/tokenize`. */
  readonly root: string;
  healthy = true;
  /** Consecutive failures (calls or probes); 0 while healthy. */
  failures = 0;
  lastFailureAt = Number.NEGATIVE_INFINITY;
  /** When an unhealthy replica may be probed again. */
  retryAt = 0;
  /** The probe in flight, if any: at most one per replica. */
  probing: Promise<boolean> | null = null;
  readonly #timing: HealthTiming;
  readonly #leases = new Map<number, number>();
  #nextLease = 0;

  constructor(url: string, timing: HealthTiming) {
    const urls = replicaUrls(url);
    this.url = urls.api;
    this.root = urls.root;
    this.#timing = timing;
  }

  /** Calls in flight on this replica now (expired leases pruned). */
  inFlight(now: number): number {
    for (const [id, startedAt] of this.#leases) {
      if (now - startedAt >= this.#timing.leaseTtlMs) this.#leases.delete(id);
    }
    return this.#leases.size;
  }

  /** Counts one more call in flight; returns its lease id for `endLease`. */
  beginLease(now: number): number {
    const id = this.#nextLease++;
    this.#leases.set(id, now);
    return id;
  }

  /** Stops counting a call. */
  endLease(id: number): void {
    this.#leases.delete(id);
  }

  /** Whether an unhealthy replica's cooldown has passed and nobody is probing it. */
  probeDue(now: number): boolean {
    return !this.healthy && this.probing === null && now >= this.retryAt;
  }

  /**
   * A connection error, 5xx or failed probe. A burst of failures from calls that were already in
   * flight counts once: the cooldown only grows for a failure seen after the previous cooldown ended.
   */
  recordFailure(now: number): void {
    this.lastFailureAt = now;
    if (!this.healthy && now < this.retryAt) return;
    this.healthy = false;
    this.failures++;
    const cooldown = Math.min(this.#timing.maxCooldownMs, this.#timing.baseCooldownMs * 2 ** (this.failures - 1));
    this.retryAt = now + cooldown;
  }

  /** A successful call or probe. */
  recordSuccess(): void {
    this.healthy = true;
    this.failures = 0;
    this.retryAt = 0;
  }
}
