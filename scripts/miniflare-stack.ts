/**
 * @module The local stack on Miniflare's own API: the Worker bundled once with esbuild and run in
 * one workerd process that Miniflare starts, with the bindings `wrangler.toml` declares (read by
 * wrangler's own `unstable_getMiniflareWorkerOptions`, so the two stacks cannot drift apart).
 *
 * Unlike `wrangler dev` (scripts/local-stack.ts) there is no Node proxy in front of workerd, no
 * second proxy workerd and no file watcher: a request goes from the client straight to workerd.
 * `wrangler dev`'s proxy spends Node CPU on every request and, under load, answers "Your worker
 * restarted mid-request"; the benches run here so they measure the Worker, not the dev tooling.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Readable } from "node:stream";
import { build } from "esbuild";
import { Log, LogLevel, Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { startVllmSimulator, type VllmSimulator } from "../src/testing";
import { agentLogLines } from "./agent-log-lines";
import { localWranglerConfig, type LocalStackOptions } from "./local-stack";

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
  stop(): Promise<void>;
}

/** Options: those of `startLocalStack`, plus the DevTools inspector for CPU profiles. */
export interface MiniflareStackOptions extends Omit<LocalStackOptions, "verbose"> {
  /** Open workerd's inspector (CPU profiles in bench/cpu-profile.ts). Default false. */
  inspector?: boolean;
  /**
   * Where Durable Objects, queues and R2 keep their data. Default `<stateDir>/state/v3`, the
   * layout `wrangler dev --persist-to <stateDir>/state` uses. (The bundle stays in `stateDir`:
   * workerd loads modules only from below its working directory.)
   */
  persistRoot?: string;
  /** Print the runtime's own output too. Default false. */
  verbose?: boolean;
}

/** Bundles the Worker entry the way wrangler does for workerd (ESM, `cloudflare:*` and `node:*` left to the runtime). */
async function bundleWorker(root: string, main: string, outDir: string): Promise<string> {
  const outfile = join(outDir, "worker.js");
  try {
    await build({
      entryPoints: [resolve(root, main)],
      outfile,
      bundle: true,
      format: "esm",
      platform: "neutral",
      target: "es2022",
      conditions: ["workerd", "worker", "browser"],
      mainFields: ["workerd", "worker", "browser", "module", "main"],
      external: ["cloudflare:*", "node:*"],
      // External source map: CPU profiles are attributed back to source files (bench/source-map.ts).
      sourcemap: "external",
      logLevel: "silent",
    });
  } catch (error) {
    throw new Error(`bundling ${main} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  return outfile;
}

/** Children of this process named `workerd` (Miniflare starts exactly one per instance). */
function workerdChildren(): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (name === "workerd" && ppid === process.pid) found.push(pid);
    } catch {
      // gone, or not Linux
    }
  }
  return found;
}

/**
 * Starts the simulator (unless `modelServerUrl` is given) and the Worker on Miniflare, pointed at
 * each other on 127.0.0.1, and resolves when the Worker answers /health. State persists in
 * `stateDir` in the layout `wrangler dev --persist-to` uses.
 */
export async function startMiniflareStack(options: MiniflareStackOptions = {}): Promise<MiniflareStack> {
  const root = resolve(import.meta.dirname, "..");
  const stateDir = resolve(root, options.stateDir ?? ".tmp/local-stack");
  if (options.reset) rmSync(stateDir, { recursive: true, force: true });
  mkdirSync(stateDir, { recursive: true });
  const main = options.main ?? "functions/worker.ts";
  const scriptPath = await bundleWorker(root, main, join(stateDir, "bundle"));
  const { workerOptions } = unstable_getMiniflareWorkerOptions(localWranglerConfig(root, stateDir, options.localBatchSize ?? 48, main));
  const simulator = options.modelServerUrl ? undefined : await startVllmSimulator({ port: 8000, ...options.simulator });
  const modelServerUrl = options.modelServerUrl ?? simulator!.url;
  const onAgentLog = options.onAgentLog === undefined ? (line: string) => process.stderr.write(`${line}\n`) : options.onAgentLog;
  const agentLines = agentLogLines((line) => onAgentLog?.(line));
  const before = new Set(workerdChildren());
  const mf = new Miniflare({
    ...workerOptions,
    name: "edge-rollout",
    modules: true,
    scriptPath,
    bindings: { ...workerOptions.bindings, LLM_BASE_URL: `${modelServerUrl}/v1`, ...options.vars },
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
          if (options.verbose) process.stderr.write(chunk);
          else agentLines(chunk);
        });
      }
    },
  });
  const stop = async () => {
    await mf.dispose().catch(() => undefined);
    await simulator?.close();
  };
  try {
    const url = await mf.ready;
    const workerUrl = url.origin;
    const health = await fetch(`${workerUrl}/health`);
    if (!health.ok) throw new Error(`GET /health answered ${health.status}`);
    const workerdPid = workerdChildren().find((pid) => !before.has(pid));
    const inspectorUrl = options.inspector ? await mf.getInspectorURL() : undefined;
    return { workerUrl, modelServerUrl, simulator, workerdPid, bundlePath: scriptPath, inspectorUrl, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
