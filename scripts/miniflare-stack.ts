/**
 * @module The local stack on Miniflare's own API: the Worker bundled once with esbuild and run in
 * one workerd process that Miniflare starts, with the bindings `wrangler.toml` declares (read by
 * wrangler's own `unstable_getMiniflareWorkerOptions`, so the two stacks cannot drift apart; its
 * answer is kept per config, scripts/wrangler-worker-options.ts, as the bundle is in .tmp/bundles).
 *
 * Unlike `wrangler dev` (scripts/local-stack.ts) there is no Node proxy in front of workerd and no
 * second proxy workerd: a request goes from the client straight to workerd. `wrangler dev`'s proxy
 * spends Node CPU on every request and, under load, answers "Your worker restarted mid-request";
 * `npm start`, `edge-rollout dev` and the benches run here (bench:loop measures both runners side
 * by side). With `watch` an edited source is rebundled and the Worker reloaded, as wrangler dev does.
 */
import { createHash } from "node:crypto";
import { wakeDurableObjectAlarms } from "./wake-alarms";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { builtinModules } from "node:module";
import { join, resolve } from "node:path";
import type { Readable } from "node:stream";
import { context, stop as stopEsbuild, type BuildOptions } from "esbuild";
import { Log, LogLevel, Miniflare, type MiniflareOptions } from "miniflare";
import { startVllmSimulator, type VllmSimulator } from "../tools/simulator";
import { agentLogLines } from "./agent-log-lines";
import { cachedBundle } from "./bundle-cache.mjs";
import { withoutAddedSignalHandlers } from "./library-signal-handlers";
import { localWranglerConfig, type LocalStackOptions } from "./local-stack";
import { startSandboxHost } from "./sandbox-host";
import { workerdChildren } from "./workerd-children";
import { wranglerWorkerOptions } from "./wrangler-worker-options";
import { WORKERD_ESM } from "./workerd-bundle";

/** A running Miniflare stack. */
export interface MiniflareStack {
  workerUrl: string;
  /** Root URL of the model server the Worker calls. */
  modelServerUrl: string;
  /** The in-process simulator, unless `modelServerUrl` was given. */
  simulator: VllmSimulator | undefined;
  /** The workerd process that runs the Worker and every Durable Object (for CPU accounting). */
  workerdPid: number | undefined;
  /** The bundled Worker (its source map is next to it, `.map`). */
  bundlePath: string;
  /** The DevTools inspector (`ws://…`) of the Worker's isolate, when `inspector` was asked for. */
  inspectorUrl: URL | undefined;
  /**
   * Resolves (with the reason) if workerd goes away on its own; never while it serves or after
   * `stop()`. Watching starts when this is first read, so a caller that never asks (the benches)
   * pays nothing for it.
   */
  readonly ended: Promise<string>;
  stop(): Promise<void>;
}

/** Options: those of `startLocalStack`, plus the DevTools inspector for CPU profiles. */
export interface MiniflareStackOptions extends Omit<LocalStackOptions, "verbose"> {
  /** Open workerd's inspector (CPU profiles in bench/kit/cpu-profile.ts). Default false. */
  inspector?: boolean;
  /**
   * Where Durable Objects, queues and R2 keep their data. Default `<stateDir>/state/v3`, the
   * layout `wrangler dev --persist-to <stateDir>/state` uses. (The bundle stays inside the
   * repository, in `.tmp/bundles` or with `watch` in `stateDir`: workerd loads modules only from
   * below its working directory.)
   */
  persistRoot?: string;
  /** Print the runtime's own output too. Default false. */
  verbose?: boolean;
  /** Rebundle and reload the Worker when a file it imports changes (state is kept). Default false. */
  watch?: boolean;
  /**
   * Start the supervised sandbox host (scripts/sandbox-host.ts) and point the Worker's `runCode` at
   * it (SANDBOX_URL), so a runaway snippet cannot wedge this stack's workerd. Default true.
   */
  sandbox?: boolean;
}

/**
 * Bare Node built-in names (`fs`, `child_process`: what CommonJS dependencies import). Under
 * nodejs_compat they are workerd's `node:` modules; wrangler also polyfills, through unenv, the few
 * workerd lacks, so an entry that needs one runs with `--runner wrangler`.
 */
const NODE_BUILTIN = new RegExp(
  `^(${builtinModules
    .filter((name) => !name.startsWith("_"))
    .map((name) => name.replace(/[/]/g, "\\/"))
    .join("|")})$`,
);

/** How the Worker entry is bundled: the way wrangler does for workerd (ESM, `cloudflare:*` and `node:*` left to the runtime). */
function bundleOptions(
  root: string,
  main: string,
  outDir: string,
): BuildOptions & { outfile: string } {
  return {
    entryPoints: [resolve(root, main)],
    outfile: join(outDir, "worker.js"),
    ...WORKERD_ESM,
    conditions: [...WORKERD_ESM.conditions],
    mainFields: [...WORKERD_ESM.mainFields],
    external: ["cloudflare:*", "node:*"],
    // Bare Node built-ins (what dependencies such as cross-spawn import) are workerd's `node:` modules under nodejs_compat.
    plugins: [
      {
        name: "node-builtins",
        setup(build) {
          build.onResolve({ filter: NODE_BUILTIN }, (args) => ({
            path: `node:${args.path}`,
            external: true,
          }));
        },
      },
    ],
    // External source map: CPU profiles are attributed back to source files (bench/kit/source-map.ts).
    sourcemap: "external",
    logLevel: "silent",
  };
}

/** Digest of the bundle on disk, so a rebuild that produced the same bytes reloads nothing. */
function bundleDigest(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** A watch on the Worker's sources: its first build is the bundle the stack starts from. */
interface WorkerWatch {
  /** Resolves after the first build, or fails with its error. */
  firstBuild: Promise<void>;
  dispose(): Promise<void>;
}

/**
 * Watches what the bundle imports and calls `reload` after each successful rebuild whose output
 * changed (a failed one is reported and the running Worker kept). The watch's own first build is
 * the stack's bundle: building once more before it would cost a second esbuild run per start.
 * esbuild also rebuilds when a directory it searched changes (another tool writing a file next to
 * node_modules, say); such a rebuild yields the same bytes, and restarting workerd for it would
 * only drop requests in flight.
 */
async function watchWorker(
  bundle: BuildOptions & { outfile: string },
  reload: () => Promise<void>,
  say: (line: string) => void,
): Promise<WorkerWatch> {
  let served: string | undefined;
  let first: { resolve: () => void; reject: (error: Error) => void } | undefined;
  const firstBuild = new Promise<void>((resolve, reject) => (first = { resolve, reject }));
  const watcher = await context({
    ...bundle,
    plugins: [
      ...(bundle.plugins ?? []),
      {
        name: "reload-worker",
        setup(build) {
          build.onEnd(async (result) => {
            if (served === undefined) {
              if (result.errors.length > 0)
                return first!.reject(
                  new Error(result.errors.map((error) => error.text).join("\n")),
                );
              served = bundleDigest(bundle.outfile);
              return first!.resolve();
            }
            if (result.errors.length > 0)
              return say(
                `[edge-rollout] rebuild failed, still serving the last good Worker: ${result.errors[0]!.text}`,
              );
            const built = bundleDigest(bundle.outfile);
            if (built === served) return; // a change that did not change the Worker
            served = built;
            await reload();
            say("[edge-rollout] source changed: Worker reloaded");
          });
        },
      },
    ],
  });
  // esbuild's service process waits for its active watches, not only for its stdin, and it
  // inherited our stderr: if this process exits mid-watch, an orphaned service can keep a caller's
  // pipe open (one was found after a CI run, holding its inherited stderr). Whatever ends this
  // process ends the service too.
  const killService = () => void stopEsbuild();
  process.once("exit", killService);
  const dispose = async () => {
    process.removeListener("exit", killService);
    await watcher.dispose();
  };
  await watcher.watch();
  return { firstBuild, dispose };
}

export { workerdChildren };

/** How long `stop()` waits for Miniflare to dispose before it kills workerd. */
const STOP_GRACE_MS = 15_000;
/** How often the stack looks for its workerd, and how many looks in a row without one mean it is gone (a reload replaces it within one). */
const RUNTIME_CHECK_MS = 1_000;
const RUNTIME_MISSED_CHECKS = 3;
/** Lines of the runtime's output kept to name why it died. */
const LAST_OUTPUT_LINES = 40;

/**
 * Resolves when none of `ours()` has been running for `RUNTIME_MISSED_CHECKS` looks in a row.
 * Miniflare neither restarts a workerd that dies nor says so; a reload starts a new one, so a
 * single look without one is not yet an end. `cancel` stops looking.
 */
function runtimeGone(
  ours: () => number[],
  lastOutput: () => string[],
): { ended: Promise<string>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const ended = new Promise<string>((resolve) => {
    let missed = 0;
    timer = setInterval(() => {
      missed = ours().length > 0 ? 0 : missed + 1;
      if (missed < RUNTIME_MISSED_CHECKS) return;
      clearInterval(timer);
      const tail = lastOutput();
      resolve(
        `workerd exited on its own (no workerd process for ${(RUNTIME_MISSED_CHECKS * RUNTIME_CHECK_MS) / 1000} s); ` +
          (tail.length > 0
            ? `its last output:\n${tail.join("\n")}`
            : "it printed nothing (run with --verbose to see all its output)"),
      );
    }, RUNTIME_CHECK_MS);
    timer.unref();
  });
  return { ended, cancel: () => clearInterval(timer) };
}

/** Whether `promise` settles within `ms` (it is left running either way). */
function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, ms, false)));
  return Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    late,
  ]).finally(() => clearTimeout(timer));
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // already gone
  }
}

/**
 * Starts the simulator (unless `modelServerUrl` is given) and the Worker on Miniflare, pointed at
 * each other on 127.0.0.1, and resolves when the Worker answers /health. State persists in
 * `stateDir` in the layout `wrangler dev --persist-to` uses.
 */
export async function startMiniflareStack(
  options: MiniflareStackOptions = {},
): Promise<MiniflareStack> {
  const root = resolve(import.meta.dirname, "..");
  const stateDir = resolve(root, options.stateDir ?? ".tmp/local-stack");
  if (options.reset) rmSync(stateDir, { recursive: true, force: true });
  mkdirSync(stateDir, { recursive: true });
  const main = options.main ?? "functions/worker.ts";
  const bundle = bundleOptions(root, main, join(stateDir, "bundle"));
  // Watching: the watch's first build is the bundle (rebuilds write there). Otherwise the bundle
  // cache, so a stack started again on unchanged sources skips esbuild.
  let reload = async (): Promise<void> => undefined;
  const watch = options.watch
    ? await watchWorker(
        bundle,
        () => reload(),
        (line) => process.stderr.write(`${line}\n`),
      )
    : undefined;
  let scriptPath: string;
  try {
    if (watch) await watch.firstBuild;
    scriptPath = watch ? bundle.outfile : await cachedBundle(bundle);
  } catch (error) {
    await watch?.dispose();
    throw new Error(
      `bundling ${main} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const workerOptions = await wranglerWorkerOptions(
    localWranglerConfig(root, stateDir, options.localBatchSize ?? 48, main),
  );
  // The sandbox host starts its own workerd (1–3 s here): alongside the simulator, not after it.
  const [simulator, sandbox] = await Promise.all([
    options.modelServerUrl ? undefined : startVllmSimulator({ port: 8000, ...options.simulator }),
    options.sandbox === false || options.vars?.SANDBOX_URL ? undefined : startSandboxHost(),
  ]);
  const modelServerUrl = options.modelServerUrl ?? simulator!.url;
  const onAgentLog =
    options.onAgentLog === undefined
      ? (line: string) => process.stderr.write(`${line}\n`)
      : options.onAgentLog;
  const agentLines = agentLogLines((line) => onAgentLog?.(line));
  // The runtime's last lines, kept even when they are not shown: a workerd that dies says why there.
  const lastOutput: string[] = [];
  const keep = (chunk: Buffer) => {
    lastOutput.push(
      ...chunk
        .toString("utf8")
        .split("\n")
        .filter((line) => line.trim() !== ""),
    );
    lastOutput.splice(0, Math.max(0, lastOutput.length - LAST_OUTPUT_LINES));
  };
  const before = new Set(workerdChildren());
  const mfOptions: MiniflareOptions = {
    ...workerOptions,
    name: "edge-rollout",
    // The bundle as the one module it is: given `scriptPath`, Miniflare parses the whole bundle to
    // look for imports (about 3 s of CPU per start and per reload here; issue 27), and it has none
    // but the runtime's own (`cloudflare:*`, `node:*`).
    modules: [{ type: "ESModule", path: scriptPath }],
    bindings: {
      ...workerOptions.bindings,
      LLM_BASE_URL: `${modelServerUrl}/v1`,
      ...(sandbox ? { SANDBOX_URL: sandbox.url } : {}),
      ...options.vars,
    },
    host: "127.0.0.1",
    port: options.workerPort ?? 8787,
    defaultPersistRoot: options.persistRoot ?? join(stateDir, "state", "v3"),
    inspectorPort: options.inspector ? 0 : undefined,
    unsafeInspectorProxy: options.inspector ? true : undefined,
    // No request for the `cf` object from Cloudflare: the local stack never touches the internet.
    cf: false,
    log: options.verbose ? new Log(LogLevel.INFO) : new Log(LogLevel.WARN),
    handleRuntimeStdio(stdout: Readable, stderr: Readable) {
      for (const stream of [stdout, stderr]) {
        stream.on("data", (chunk: Buffer) => {
          keep(chunk);
          if (options.verbose) process.stderr.write(chunk);
          else agentLines(chunk);
        });
      }
    },
  };
  const mf = await withoutAddedSignalHandlers(() => new Miniflare(mfOptions));
  reload = () => mf.setOptions(mfOptions);
  const ours = () => workerdChildren().filter((pid) => !before.has(pid));
  let runtime: ReturnType<typeof runtimeGone> | undefined;
  const stop = async () => {
    runtime ??= { ended: new Promise<string>(() => undefined), cancel: () => undefined }; // read after stop: nothing to watch
    runtime.cancel();
    const disposed = (async () => {
      await watch?.dispose().catch(() => undefined);
      await mf.dispose().catch(() => undefined);
    })();
    // Stopping must end: if Miniflare does not finish disposing in time, its workerd is killed.
    if (!(await settlesWithin(disposed, STOP_GRACE_MS))) {
      process.stderr.write(
        `[edge-rollout] Miniflare did not stop within ${STOP_GRACE_MS / 1000} s; killing its workerd\n`,
      );
      for (const pid of ours()) killQuietly(pid);
    }
    await simulator?.close();
    await sandbox?.stop();
  };
  try {
    const url = await mf.ready;
    const workerUrl = url.origin;
    const health = await fetch(`${workerUrl}/health`, { signal: AbortSignal.timeout(60_000) });
    if (!health.ok) throw new Error(`GET /health answered ${health.status}`);
    await wakeDurableObjectAlarms(workerUrl, options.vars?.API_TOKEN);
    const workerdPid = ours()[0];
    const inspectorUrl = options.inspector ? await mf.getInspectorURL() : undefined;
    return {
      workerUrl,
      modelServerUrl,
      simulator,
      workerdPid,
      bundlePath: scriptPath,
      inspectorUrl,
      stop,
      // Started only after ready (before it there is no workerd to miss), and only when asked for.
      get ended() {
        return (runtime ??= runtimeGone(ours, () => lastOutput)).ended;
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
