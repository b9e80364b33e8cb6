/**
 * @module Keeps Ctrl-C for whoever owns the local stack. Loading wrangler installs SIGINT and
 * SIGTERM handlers that call `process.exit()` at once, and each Miniflare instance adds its exit
 * hook's, which exit with 130. They run before any handler the stack's owner adds later, so
 * `edge-rollout dev` and `npm start` never got to stop the stack in order: Ctrl-C exited with
 * workerd killed by Miniflare's `exit` listener and nothing else disposed.
 */

const SIGNALS = ["SIGINT", "SIGTERM"] as const;

/**
 * Runs `load` and removes the SIGINT/SIGTERM listeners it added. `exit` listeners stay, so
 * Miniflare still kills its workerd if the process ends any other way.
 */
export async function withoutAddedSignalHandlers<T>(load: () => Promise<T> | T): Promise<T> {
  const before = new Map(SIGNALS.map((signal) => [signal, new Set(process.listeners(signal))]));
  try {
    return await load();
  } finally {
    for (const signal of SIGNALS) {
      for (const listener of process.listeners(signal))
        if (!before.get(signal)!.has(listener)) process.removeListener(signal, listener);
    }
  }
}
