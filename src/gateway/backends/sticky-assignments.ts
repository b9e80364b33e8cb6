/** @module A bounded rollout → replica memory, so stickiness survives bounded-load detours without a hint. */

/**
 * Least-recently-used map of the replica each rollout last used successfully. It lives in one
 * backend instance, so it is per isolate: a session's `replicaHint` is the durable source of
 * truth and wins over it; this only covers callers that do not pass a hint.
 */
export class StickyAssignments {
  readonly #capacity: number;
  readonly #entries = new Map<string, { replica: string; calls: number }>();

  /** `capacity` entries at most (default 10,000: a few hundred KB per isolate). */
  constructor(capacity = 10_000) {
    this.#capacity = Math.max(1, capacity);
  }

  /** The replica `rolloutId` last used, if remembered. */
  get(rolloutId: string): string | undefined {
    const entry = this.#entries.get(rolloutId);
    if (entry !== undefined) {
      // Re-insert so Map order tracks recency and eviction drops the coldest rollout.
      this.#entries.delete(rolloutId);
      this.#entries.set(rolloutId, entry);
    }
    return entry?.replica;
  }

  /** How many successful calls in a row `rolloutId` made on `replica`, as this isolate saw them; undefined if unknown. */
  callsOn(rolloutId: string, replica: string): number | undefined {
    const entry = this.#entries.get(rolloutId);
    return entry?.replica === replica ? entry.calls : undefined;
  }

  /** Remembers that `rolloutId` used `replica`, evicting the least recently used entry when full. */
  set(rolloutId: string, replica: string): void {
    const before = this.#entries.get(rolloutId);
    const calls = before?.replica === replica ? before.calls + 1 : 1;
    this.#entries.delete(rolloutId);
    this.#entries.set(rolloutId, { replica, calls });
    if (this.#entries.size > this.#capacity) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
  }

  /** How many rollouts are remembered. */
  get size(): number {
    return this.#entries.size;
  }
}
