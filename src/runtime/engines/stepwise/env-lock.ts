/**
 * @module `isMultithreadSafe()` on Workers. A driver never shares an env instance between rollouts
 * (each invocation builds its own with `fromDict`), but one isolate drives many rollouts at once
 * (a queue batch, up to 128 MB of them), and their async env calls interleave at every await. An env
 * class that answers `isMultithreadSafe() === false` says its instances must not run interleaved
 * (a module-level client, a shared scratch file, a non-reentrant native binding): its calls are then
 * serialised, one at a time per class per isolate. Isolates do not share memory, so nothing wider
 * is needed; a safe class (the seed's default) runs unserialised.
 */
import type { EnvClass } from "../../../sdk/base-env";
import { callUserCode } from "../user-code";

const tails = new WeakMap<object, Promise<unknown>>();

/** Whether the class declares itself safe; a missing or throwing method counts as the seed's default, safe. */
function isSafe(envClass: Pick<EnvClass, "isMultithreadSafe">): boolean {
  try {
    return (
      typeof envClass.isMultithreadSafe !== "function" || envClass.isMultithreadSafe() !== false
    );
  } catch {
    return true;
  }
}

/** Calls env code as `callUserCode("env", …)` does, one call at a time per class when the class is not multithread-safe. */
export function callEnv<T>(
  envClass: Pick<EnvClass, "isMultithreadSafe">,
  what: string,
  fn: () => T | Promise<T>,
): Promise<T> {
  if (isSafe(envClass)) return callUserCode("env", what, fn);
  const previous = tails.get(envClass) ?? Promise.resolve();
  const call = previous.then(() => callUserCode("env", what, fn));
  tails.set(
    envClass,
    call.catch(() => undefined),
  );
  return call;
}
