import { describe, expect, it, vi } from "vitest";
import { ModelError } from "../../../src/errors";
import { type RetryPolicy, backoffDelayMs, withRetries } from "../../../src/gateway/retry";

const policy: RetryPolicy = { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1_000 };
const fast: RetryPolicy = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 };
const retryable = () => new ModelError("upstream 503", { retryable: true, upstreamStatus: 503 });

describe("backoffDelayMs", () => {
  it("jitters within half to all of the doubling delay", () => {
    for (const [attempt, full] of [
      [1, 100],
      [2, 200],
      [3, 400],
      [4, 800],
    ] as const) {
      expect(backoffDelayMs(policy, attempt, null, () => 0)).toBe(full / 2);
      expect(backoffDelayMs(policy, attempt, null, () => 1)).toBe(full);
      for (let i = 0; i < 50; i++) {
        const delay = backoffDelayMs(policy, attempt, null);
        expect(delay).toBeGreaterThanOrEqual(full / 2);
        expect(delay).toBeLessThanOrEqual(full);
      }
    }
  });

  it("never exceeds the cap, however many attempts", () => {
    for (const attempt of [5, 10, 60, 2000]) {
      expect(backoffDelayMs(policy, attempt, null, () => 0.999)).toBeLessThanOrEqual(1_000);
      expect(backoffDelayMs(policy, attempt, null, () => 0)).toBe(500);
    }
  });

  it("waits at least what Retry-After asks, up to the cap", () => {
    expect(backoffDelayMs(policy, 1, 0.7, () => 0)).toBe(700);
    expect(backoffDelayMs(policy, 1, 60, () => 0)).toBe(1_000);
    // A Retry-After shorter than the backoff does not shorten it.
    expect(backoffDelayMs(policy, 4, 0.1, () => 1)).toBe(800);
    expect(backoffDelayMs(policy, 1, 0, () => 0)).toBe(50);
  });
});

describe("withRetries", () => {
  it("returns the value and the attempt that produced it", async () => {
    let calls = 0;
    const result = await withRetries(fast, undefined, async (attempt) => {
      calls++;
      if (attempt < 3) throw retryable();
      return "ok";
    });
    expect(result).toEqual({ value: "ok", attempts: 3 });
    expect(calls).toBe(3);
  });

  it("stops at the first non-retryable ModelError or foreign error", async () => {
    for (const error of [
      new ModelError("upstream 404: no such model", { retryable: false, upstreamStatus: 404 }),
      new TypeError("bug"),
    ]) {
      let calls = 0;
      const run = withRetries(fast, undefined, async () => {
        calls++;
        throw error;
      });
      await expect(run).rejects.toBe(error);
      expect(calls).toBe(1);
    }
  });

  it("gives up after maxAttempts with the last error", async () => {
    const errors: ModelError[] = [];
    const run = withRetries(fast, undefined, async () => {
      errors.push(retryable());
      throw errors.at(-1);
    });
    const thrown = await run.catch((error: unknown) => error);
    expect(errors).toHaveLength(fast.maxAttempts);
    expect(thrown).toBe(errors.at(-1));
  });

  it("aborts promptly while waiting between attempts", async () => {
    // Fake time: the abort lands 20 ms into a backoff of at least 10 s, and ends the wait there.
    vi.useFakeTimers();
    try {
      const slow: RetryPolicy = { maxAttempts: 5, baseDelayMs: 20_000, maxDelayMs: 20_000 };
      const controller = new AbortController();
      const reason = new Error("rollout cancelled");
      let calls = 0;
      let outcome: unknown = "pending";
      const run = withRetries(slow, controller.signal, async () => {
        calls++;
        throw retryable();
      }).catch((error: unknown) => (outcome = error));
      await vi.advanceTimersByTimeAsync(19);
      expect(outcome).toBe("pending");
      controller.abort(reason);
      await run;
      expect(outcome).toBe(reason);
      expect(calls).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it("does not retry once the signal has aborted", async () => {
    const controller = new AbortController();
    let calls = 0;
    const run = withRetries(fast, controller.signal, async () => {
      calls++;
      controller.abort();
      throw retryable();
    });
    await expect(run).rejects.toBeInstanceOf(ModelError);
    expect(calls).toBe(1);
  });
});
