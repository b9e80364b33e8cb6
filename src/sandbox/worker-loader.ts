/**
 * @module The one declaration of the Worker Loader binding as the sandboxes use it. The platform's
 * type is `WorkerLoader` in the generated `worker-configuration.d.ts`, but Node-side code compiles
 * these sandboxes too (the sandbox host's supervisor, the unit tests, the benches) without the
 * Workers types, so the slice they call is declared here once. `functions/code-sandbox.ts` and
 * `functions/sandbox-host.worker.ts` pass a real `WorkerLoader` where this is expected, so the
 * Worker typecheck fails if the slice stops matching the platform.
 */

/** A module given to a Worker Loader isolate. */
export type LoaderModule =
  string | { js: string } | { text: string } | { data: ArrayBuffer } | { wasm: ArrayBuffer };

/** The slice of a Worker Loader binding (`WorkerLoader` in workers-types) the sandboxes call. */
export interface LoaderBinding {
  load(code: {
    compatibilityDate: string;
    mainModule: string;
    modules: Record<string, LoaderModule>;
    env: Record<string, never>;
    globalOutbound: null;
    limits?: { cpuMs?: number };
  }): { getEntrypoint(): unknown };
}
