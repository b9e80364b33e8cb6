import { describe, expect, it } from "vitest";
import { RateLimiter } from "../../../src/online";

describe("per-key rate limits (unit)", () => {
  it("admits a burst, refuses the next with the seconds until a token, and refills at the rate", () => {
    let now = 0;
    const limiter = new RateLimiter(() => now);
    const limit = { per_second: 0.5, burst: 2 };
    expect(limiter.take("k", limit)).toEqual({ ok: true });
    expect(limiter.take("k", limit)).toEqual({ ok: true });
    expect(limiter.take("k", limit)).toEqual({ ok: false, retry_after_s: 2 });
    now = 2_000;
    expect(limiter.take("k", limit)).toEqual({ ok: true });
    expect(limiter.take("k", limit).ok).toBe(false);
  });

  it("keeps each key's bucket apart", () => {
    const limiter = new RateLimiter(() => 0);
    const limit = { per_second: 1, burst: 1 };
    expect(limiter.take("a", limit).ok).toBe(true);
    expect(limiter.take("a", limit).ok).toBe(false);
    expect(limiter.take("b", limit).ok).toBe(true);
  });
});
