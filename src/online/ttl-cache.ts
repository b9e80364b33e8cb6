/**
 * @module A value per key kept in the isolate for a short time: how the per-call path reads what a
 * deployment-wide object holds (an application's key record, the serving configuration) without
 * asking that object on every call. A change reaches other isolates within the TTL.
 */

/** Entries kept at most; the oldest is dropped past it. */
const MAX_ENTRIES = 10_000;

/**
 * A TTL cache of loaded values. Only settled values are kept, never a pending load: in workerd a
 * promise belongs to the request that made it, and another request waiting on it would hang if
 * that request were cancelled. Concurrent misses each load (the loads are idempotent reads).
 */
export class TtlCache<V> {
  readonly #entries = new Map<string, { value: V; until: number }>();
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(ttlMs: number, now: () => number = Date.now) {
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  /** The value of `key`, loaded with `load` when absent or older than the TTL (a failed load is not kept). */
  async get(key: string, load: () => Promise<V>): Promise<V> {
    const held = this.#entries.get(key);
    if (held && held.until > this.#now()) return held.value;
    const value = await load();
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, { value, until: this.#now() + this.#ttlMs });
    return value;
  }

  /** Forgets `key` (a change made in this isolate applies here at once). */
  forget(key: string): void {
    this.#entries.delete(key);
  }
}
