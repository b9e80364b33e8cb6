/**
 * @module Per-key rate limits: a token bucket per key, kept in the isolate. No object is asked per
 * call (the per-call path reaches only the session's own object), so the limit holds per isolate:
 * a deployment running N isolates for one key admits up to N × the rate, as Cloudflare's own
 * rate-limiting binding counts per location. docs/online.md says so.
 */
import type { RateLimit } from "../schemas/online";

/** A bucket's verdict: admitted, or refused with the seconds until a request would be. */
export type RateVerdict = { ok: true } | { ok: false; retry_after_s: number };

interface Bucket {
  tokens: number;
  at: number;
}

/** Most keys one isolate keeps buckets for; the oldest is dropped past it (it starts full again). */
const MAX_BUCKETS = 10_000;

/** Token buckets by key. */
export class RateLimiter {
  readonly #buckets = new Map<string, Bucket>();
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Takes one token of `key`'s bucket under `limit` (a changed limit applies from now). */
  take(key: string, limit: RateLimit): RateVerdict {
    const now = this.#now();
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      if (this.#buckets.size >= MAX_BUCKETS)
        this.#buckets.delete(this.#buckets.keys().next().value!);
      bucket = { tokens: limit.burst, at: now };
      this.#buckets.set(key, bucket);
    }
    const refill = ((now - bucket.at) / 1000) * limit.per_second;
    bucket.tokens = Math.min(limit.burst, bucket.tokens + refill);
    bucket.at = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { ok: true };
    }
    return {
      ok: false,
      retry_after_s: Math.max(1, Math.ceil((1 - bucket.tokens) / limit.per_second)),
    };
  }
}
