/** @module Bounded, jittered exponential backoff for upstream calls. */
import { ModelError } from "../errors";

/** How hard to retry. Defaults: 4 attempts, 250 ms base, 4 s cap. */
export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** The default policy: a failed call is tried at most 4 times over roughly 2–8 s. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 4_000,
};

/** Full-jitter delay before attempt `attempt + 1` (attempt counts from 1), honouring Retry-After up to the cap. */
export function backoffDelayMs(
  policy: RetryPolicy,
  attempt: number,
  retryAfterSeconds: number | null,
  random = Math.random,
): number {
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  const jittered = exponential / 2 + random() * (exponential / 2);
  if (retryAfterSeconds !== null)
    return Math.min(policy.maxDelayMs, Math.max(jittered, retryAfterSeconds * 1000));
  return jittered;
}

/** Resolves after `ms`, or rejects as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Runs `attemptOnce` until it succeeds, a non-retryable ModelError is thrown, the attempts run out,
 * or `signal` aborts. Returns the value and how many attempts it took.
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  signal: AbortSignal | undefined,
  attemptOnce: (attempt: number) => Promise<T>,
): Promise<{ value: T; attempts: number }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return { value: await attemptOnce(attempt), attempts: attempt };
    } catch (error) {
      const retryable = error instanceof ModelError && error.retryable;
      if (!retryable || attempt >= policy.maxAttempts || signal?.aborted) throw error;
      await sleep(backoffDelayMs(policy, attempt, error.retryAfterSeconds), signal);
    }
  }
}
