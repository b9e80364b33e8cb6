/** @module `edge-rollout dev`: the local stack (vLLM simulator + the Worker on Miniflare or `wrangler dev`) until Ctrl-C. */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { ExitCode, OperationError, UsageError } from "../errors";
import { formatFields } from "../format";
import type { Output } from "../output";

/** The local runners (scripts/dev-stack.ts `RUNNERS`, restated: the CLI must not import scripts/ at load). */
export const DEV_RUNNERS = ["miniflare", "wrangler"] as const;

/** What `dev` uses of scripts/dev-stack.ts (typed here; see the import in runDev). */
interface DevStackHandle {
  workerUrl: string;
  modelServerUrl: string;
  simulator: unknown;
  ended: Promise<string>;
  stop(): Promise<void>;
}
interface DevStackModule {
  startDevStack(
    runner: (typeof DEV_RUNNERS)[number],
    options: {
      workerPort: number;
      main: string;
      stateDir: string;
      reset: boolean;
      verbose: boolean;
      watch: boolean;
      modelServerUrl?: string;
      simulator?: { port: number; seed: number };
    },
  ): Promise<DevStackHandle>;
}

/** `dev`'s options after parsing. */
export interface DevOptions {
  port: number;
  simulatorPort: number;
  /** Use this model server (root URL) instead of starting the simulator. */
  modelUrl?: string;
  /** Default `.tmp/local-stack-<port>` (as `npm start`), relative to the repository. */
  stateDir?: string;
  /** The Worker entry, relative to the repository (`examples/worker.ts` serves the examples too). */
  worker: string;
  /** Delete the state dir before starting. Default false: state persists across runs. */
  reset: boolean;
  /** Seed of the simulator's scripted answers. Default 1. */
  seed: number;
  /** `miniflare` (default: Miniflare's API, reloads on edit) or `wrangler` (`wrangler dev`). */
  runner: (typeof DEV_RUNNERS)[number];
  verbose: boolean;
}

/**
 * Starts the stack `npm start` runs, without the demo batch, prints its URLs and serves until
 * SIGINT/SIGTERM (exit 0). Exit 1 when it cannot start, or when the runner dies on its own
 * (`wrangler dev` exits, or, with the miniflare runner, workerd is gone for a few seconds).
 * Needs the dev dependencies (wrangler, miniflare, esbuild), as `npm ci` installs them.
 */
export async function runDev(options: DevOptions, out: Output): Promise<ExitCode> {
  try {
    createRequire(import.meta.url).resolve("wrangler/bin/wrangler.js");
  } catch {
    throw new OperationError("dev needs wrangler, a dev dependency of this package", {
      hint: "run `npm ci` (without --omit=dev)",
    });
  }
  // The bundled CLI (bin/edge-rollout.mjs) runs without a TypeScript loader; scripts/ needs one.
  if (
    (globalThis as Record<symbol, unknown>)[Symbol.for("edge-rollout.needs-typescript-loader")] ===
    true
  )
    (await import("tsx/esm/api")).register();
  // Loaded here, not at the top, so other commands do not pay for wrangler and the simulator; and by
  // a computed URL so the Worker tsconfig (which also sees src/) does not pull in Node-only scripts.
  const { startDevStack } = (await import(
    new URL("../../../scripts/dev-stack.ts", import.meta.url).href
  )) as DevStackModule;
  const worker = fileURLToPath(new URL(`../../../${options.worker}`, import.meta.url));
  if (!existsSync(worker))
    throw new UsageError(`--worker ${options.worker}: no such file in this repository`);
  const stateDir = options.stateDir ?? `.tmp/local-stack-${options.port}`;
  out.note(`starting the local stack on 127.0.0.1:${options.port} …`);
  let stack: DevStackHandle;
  try {
    stack = await startDevStack(options.runner, {
      workerPort: options.port,
      main: options.worker,
      stateDir,
      reset: options.reset,
      verbose: options.verbose,
      watch: true,
      ...(options.modelUrl
        ? { modelServerUrl: options.modelUrl.replace(/\/+$/, "").replace(/\/v1$/, "") }
        : { simulator: { port: options.simulatorPort, seed: options.seed } }),
    });
  } catch (error) {
    throw new OperationError(
      `the local stack did not start: ${error instanceof Error ? error.message : String(error)}`,
      {
        hint: "is the port free? Try --port / --simulator-port, or --verbose for the runtime's output",
      },
    );
  }
  const info = {
    ok: true,
    runner: options.runner,
    worker_url: stack.workerUrl,
    dashboard_url: `${stack.workerUrl}/`,
    model_server_url: stack.modelServerUrl,
    simulator: stack.simulator !== undefined,
    state_dir: stateDir,
    reset: options.reset,
    pid: process.pid,
  };
  // Ctrl-C is ours before the banner says so: a signal sent as soon as it is read (a script, a
  // test) found no handler and killed the process with the stack still running (a CI flake).
  const stopped = new Promise<{ by: "signal" } | { by: "crash"; reason: string }>((resolve) => {
    process.once("SIGINT", () => resolve({ by: "signal" }));
    process.once("SIGTERM", () => resolve({ by: "signal" }));
    void stack.ended.then((reason) => resolve({ by: "crash", reason }));
  });
  out.result(info, () =>
    [
      "edge-rollout local stack is up",
      formatFields([
        [
          "dashboard",
          `${stack.workerUrl}/  (batches, rollouts and their token strips, in a browser)`,
        ],
        [
          "API",
          `${stack.workerUrl}  (GET /health, /v1/…; Worker ${options.worker}, reloaded on edit)`,
        ],
        [
          "runner",
          options.runner === "miniflare"
            ? "miniflare  (Miniflare's API; --runner wrangler for wrangler dev)"
            : "wrangler dev",
        ],
        [
          "model server",
          `${stack.modelServerUrl}/v1  ${stack.simulator ? "(vLLM simulator)" : "(yours)"}`,
        ],
        [
          "state",
          `${stateDir}  (${options.reset ? "reset" : "kept across runs; --reset starts empty"})`,
        ],
        ["agent logs", "below, as [rollout <id>] …  (--verbose: all of the runtime's output)"],
      ]),
      "",
      `try:  export EDGE_ROLLOUT_URL=${stack.workerUrl}`,
      "      npx edge-rollout submit test/fixtures/datasets/calculator.parquet --agent calculator --n 4",
      `      npx edge-rollout doctor --model-url ${stack.modelServerUrl}`,
      "Ctrl-C stops the stack.",
    ].join("\n"),
  );
  const ended = await stopped;
  out.note(
    ended.by === "signal"
      ? "stopping … (Ctrl-C again to exit at once)"
      : "the runner exited; stopping",
  );
  // A second Ctrl-C does not wait for the runtime to finish disposing.
  const now = () => process.exit(130);
  process.once("SIGINT", now);
  process.once("SIGTERM", now);
  await stack.stop();
  // Reported as the command's error (on stderr, or as the JSON document with --json), exit 1.
  if (ended.by === "crash")
    throw new OperationError(`the local stack stopped serving: ${ended.reason}`, {
      hint: "start it again; --verbose shows the runtime's own output",
    });
  return ExitCode.ok;
}
