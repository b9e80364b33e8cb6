/** @module One upstream attempt's own deadline, layered over the caller's signal. */

/** A running per-attempt deadline. */
export interface AttemptDeadline {
  /** Aborts when the caller's signal does or the deadline passes (undefined: neither can happen). */
  readonly signal: AbortSignal | undefined;
  /** Whether the deadline (not the caller) is what aborted. */
  readonly timedOut: boolean;
  /** Stops the clock; the signal keeps following the caller's. */
  settle(): void;
}

/**
 * Starts a deadline of `timeoutMs` for one attempt. Without one, the caller's signal is used as
 * is. The caller's own abort stays distinguishable: it is final, a passed deadline is retried.
 */
export function startAttemptDeadline(
  caller: AbortSignal | undefined,
  timeoutMs: number | undefined,
): AttemptDeadline {
  if (timeoutMs === undefined) return { signal: caller, timedOut: false, settle() {} };
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error(`upstream attempt exceeded ${timeoutMs} ms`));
  }, timeoutMs);
  // Linked by hand: inside workerd (wrangler 4.86's runtime) a fetch given `AbortSignal.any([...])`
  // got no response in our tests, while a plain controller's signal works.
  if (caller?.aborted) controller.abort(caller.reason);
  else caller?.addEventListener("abort", () => controller.abort(caller.reason), { once: true });
  const signal = controller.signal;
  return {
    signal,
    get timedOut() {
      return timedOut;
    },
    settle: () => clearTimeout(timer),
  };
}
