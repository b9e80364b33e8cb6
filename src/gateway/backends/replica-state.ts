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

/** Weight of the newest call in a replica's recent call time (an EWMA over roughly the last 10 calls). */
const CALL_TIME_WEIGHT = 0.2;

/**
 * How fast a replica's recent call time stops counting once no call ends there: half of what sets
 * it apart from the others is forgotten every 30 s, so a replica that was slow (and so got no new
 * rollouts) is tried again rather than shunned for good.
 */
export const CALL_TIME_HALF_LIFE_MS = 30_000;

/** The defaults of `HealthTiming`. */
export const DEFAULT_HEALTH_TIMING: HealthTiming = {
  baseCooldownMs: 5_000,
  maxCooldownMs: 60_000,
  leaseTtlMs: 15 * 60_000,
};

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
  #lastLeaseAt = Number.NEGATIVE_INFINITY;
  /** Whether every lease began no earlier than the one before it (see `inFlight`). */
  #startsInOrder = true;
  #callMs: number | null = null;
  #callEndedAt = 0;

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
      // Leases are kept in the order they began: once one is young enough, so are the rest (every
      // routing decision asks each replica, so a full scan per call was O(replicas × calls)).
      else if (this.#startsInOrder) break;
    }
    return this.#leases.size;
  }

  /** Counts one more call in flight; returns its lease id for `endLease`. */
  beginLease(now: number): number {
    // A clock that stepped back (a test's, or a host's) breaks the order the scan above relies on.
    if (now < this.#lastLeaseAt) this.#startsInOrder = false;
    this.#lastLeaseAt = now;
    const id = this.#nextLease++;
    this.#leases.set(id, now);
    return id;
  }

  /** Stops counting a call; returns when it began (undefined if it was already pruned). */
  endLease(id: number): number | undefined {
    const startedAt = this.#leases.get(id);
    this.#leases.delete(id);
    return startedAt;
  }

  /** Folds one successful call's duration into the replica's recent call time. */
  recordCallTime(ms: number, now: number): void {
    this.#callMs =
      this.#callMs === null ? ms : this.#callMs + CALL_TIME_WEIGHT * (ms - this.#callMs);
    this.#callEndedAt = now;
  }

  /** Recent time per successful call (ms) and when the last one ended; null before the first. */
  recentCallTime(): { ms: number; endedAt: number } | null {
    return this.#callMs === null ? null : { ms: this.#callMs, endedAt: this.#callEndedAt };
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
    const cooldown = Math.min(
      this.#timing.maxCooldownMs,
      this.#timing.baseCooldownMs * 2 ** (this.failures - 1),
    );
    this.retryAt = now + cooldown;
  }

  /** A successful call or probe. */
  recordSuccess(): void {
    this.healthy = true;
    this.failures = 0;
    this.retryAt = 0;
  }
}
