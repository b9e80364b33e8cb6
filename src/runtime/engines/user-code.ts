/** @module Calls into agent and environment code, tagging what they throw. */
import { describeError, UserCodeError } from "../../errors";

/**
 * Awaits user code and rethrows anything it throws as a `UserCodeError` naming the side
 * (`agent` → AGENT_ERROR, `env` → ENV_ERROR), so failures are recorded, never surfaced as a 500.
 */
export async function callUserCode<T>(
  source: "agent" | "env",
  what: string,
  fn: () => T | Promise<T>,
): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw new UserCodeError(source, `${what} threw ${describeError(error)}`, error);
  }
}

/** Rejects with `signal.reason` as soon as `signal` aborts; user code that ignores signals cannot hang a step. */
export function raceSignal<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
