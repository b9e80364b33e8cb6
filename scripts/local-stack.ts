/** @module The local stack: the vLLM simulator in-process plus `wrangler dev` as a child process. */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { startVllmSimulator, type VllmSimulator, type VllmSimulatorOptions } from "../src/testing";

const require = createRequire(import.meta.url);

/** Options of `startLocalStack`. */
export interface LocalStackOptions {
  /** Worker port. Default 8787. */
  workerPort?: number;
  /** Simulator options (port default 8000). */
  simulator?: VllmSimulatorOptions;
  /** Use an already running model server (root URL, without /v1) instead of starting the simulator. */
  modelServerUrl?: string;
  /** Extra `--var NAME:VALUE` bindings for the Worker. */
  vars?: Record<string, string>;
  /** Where wrangler keeps local state and logs. Default `.tmp/local-stack`. */
  stateDir?: string;
  /** Print wrangler's output. Default false (it is kept for error reports). */
  verbose?: boolean;
}

/** A running local stack. */
export interface LocalStack {
  workerUrl: string;
  /** Root URL of the model server the Worker calls. */
  modelServerUrl: string;
  /** The in-process simulator, unless `modelServerUrl` was given. */
  simulator: VllmSimulator | undefined;
  /** The wrangler process (its pid identifies the workerd tree for CPU accounting). */
  wrangler: ChildProcess;
  stop(): Promise<void>;
}

async function waitForHealth(url: string, child: ChildProcess, output: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited with code ${child.exitCode}:\n${output()}`);
    try {
      const response = await fetch(`${url}/health`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`wrangler dev did not become healthy within ${timeoutMs} ms:\n${output()}`);
}

/**
 * Starts the simulator and `wrangler dev` (miniflare: Durable Objects, Queues and R2 locally),
 * pointed at each other on 127.0.0.1, and resolves when the Worker answers /health.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const root = resolve(import.meta.dirname, "..");
  const stateDir = resolve(root, options.stateDir ?? ".tmp/local-stack");
  mkdirSync(stateDir, { recursive: true });
  const simulator = options.modelServerUrl ? undefined : await startVllmSimulator({ port: 8000, ...options.simulator });
  const modelServerUrl = options.modelServerUrl ?? simulator!.url;
  const workerPort = options.workerPort ?? 8787;
  const vars = { LLM_BASE_URL: `${modelServerUrl}/v1`, ...options.vars };
  const args = [
    require.resolve("wrangler/bin/wrangler.js"),
    "dev",
    "--ip", "127.0.0.1",
    "--port", String(workerPort),
    "--inspector-port", "0",
    "--persist-to", join(stateDir, "state"),
    "--show-interactive-dev-session=false",
    "--log-level", options.verbose ? "info" : "warn",
    ...Object.entries(vars).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
  ];
  const wrangler = spawn(process.execPath, args, {
    cwd: root,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      WRANGLER_SEND_METRICS: "false",
      CLOUDFLARE_CF_FETCH_ENABLED: "false",
      WRANGLER_LOG_PATH: join(stateDir, "logs"),
      XDG_CONFIG_HOME: join(stateDir, "config"),
    },
  });
  let log = "";
  const keep = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-20_000);
    if (options.verbose) process.stderr.write(chunk);
  };
  wrangler.stdout?.on("data", keep);
  wrangler.stderr?.on("data", keep);
  const workerUrl = `http://127.0.0.1:${workerPort}`;
  const stop = async () => {
    if (wrangler.exitCode === null) {
      const exited = new Promise((r) => wrangler.once("exit", r));
      wrangler.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      if (wrangler.exitCode === null) wrangler.kill("SIGKILL");
    }
    await simulator?.close();
  };
  try {
    await waitForHealth(workerUrl, wrangler, () => log, 60_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { workerUrl, modelServerUrl, simulator, wrangler, stop };
}
