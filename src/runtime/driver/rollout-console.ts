/** @module Agent `console` output tagged with the rollout it came from. */
import { AsyncLocalStorage } from "node:async_hooks";
import { format } from "node:util";

/** The prefix of every line an agent logs while driving a rollout: `[rollout <id>] `. */
export function rolloutLogPrefix(rolloutId: string): string {
  return `[rollout ${rolloutId}] `;
}

// Many rollouts run at once in one isolate (a queue batch drives several), so the rollout a
// console call belongs to comes from the async call tree, as the emitters' attempt does.
const current = new AsyncLocalStorage<string>();
const METHODS = ["log", "info", "warn", "error", "debug"] as const;
const installed = new WeakSet<Console>();

/** Prefixes every line of `text` (an agent's multi-line log stays attributable line by line). */
export function prefixLines(rolloutId: string, text: string): string {
  const prefix = rolloutLogPrefix(rolloutId);
  return text
    .split("\n")
    .map((line) => prefix + line)
    .join("\n");
}

/**
 * Wraps the isolate's `console` once: inside `runWithRolloutConsole`, each call is formatted as
 * `console` would and every line is prefixed with the rollout id, so `npm start` and
 * `edge-rollout dev` can show agent logs (and only those) by default. Outside a rollout, console
 * calls are unchanged.
 */
export function installRolloutConsole(target: Console = console): void {
  if (installed.has(target)) return;
  installed.add(target);
  for (const method of METHODS) {
    const original = target[method].bind(target);
    target[method] = (...args: unknown[]) => {
      const rolloutId = current.getStore();
      if (rolloutId === undefined) return original(...args);
      return original(prefixLines(rolloutId, format(...args)));
    };
  }
}

/** Runs `fn` (and everything it awaits) as code of rollout `rolloutId` for `console`. */
export function runWithRolloutConsole<T>(
  rolloutId: string,
  fn: () => T,
  target: Console = console,
): T {
  installRolloutConsole(target);
  return current.run(rolloutId, fn);
}
