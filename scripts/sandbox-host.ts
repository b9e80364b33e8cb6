/**
 * @module The local sandbox host: a workerd process of its own (a Miniflare instance running
 * functions/sandbox-host.worker.ts with a Worker Loader binding) behind a small Node server that
 * enforces the limits local workerd does not.
 *
 * Why (bench/sandbox-spike.ts): locally a loaded isolate runs on its parent's thread and workerd
 * enforces no CPU or memory limit (`limits.cpuMs` is ignored), so `while (true) {}` wedges the
 * whole process: the parent's own timer never fires and no other request is served. Here the Node
 * side owns the clock: a call with no answer by `timeoutMs + graceMs` is a timeout, and the process
 * is SIGKILLed and started again; its RSS is polled while calls run and a process over
 * `memoryLimitMb` is killed the same way. Calls that were in flight on a killed process (innocent
 * neighbours) are run once more on the new one. A spare process is kept started, so a restart is a
 * swap (starting workerd takes 1–3 s on a loaded 2-core machine) and a runaway costs its timeout.
 */
import { readFileSync } from "node:fs";
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { build } from "esbuild";
import { Log, LogLevel, Miniflare } from "miniflare";
import type { RunCodeInput, RunCodeResult } from "../src/schemas/run-code";
import { SANDBOX_COMPATIBILITY_DATE, failedResult } from "../src/sandbox/loader-sandbox";
import { parseRunCodeRequest } from "../src/sdk/run-code";
import { workerdChildren } from "./workerd-children";

/** Options of the sandbox host. */
export interface SandboxHostOptions {
  /** Kill the sandbox workerd above this resident size, in MB (production's figure is 128 MB per isolate). Default 1024. */
  memoryLimitMb?: number;
  /** Time past a call's `timeoutMs` before the host is declared wedged, in ms. Default 1000. */
  graceMs?: number;
  /** Port of the Node server on 127.0.0.1. Default 0 (a free one). */
  port?: number;
}

/** A running sandbox host. */
export interface SandboxHost {
  /** Base URL to set as the Worker's SANDBOX_URL. */
  url: string;
  /** How many times the sandbox workerd was killed and started again. */
  restarts(): number;
  /** The current sandbox workerd's pid (tests check that a runaway replaced it). */
  pid(): Promise<number | undefined>;
  stop(): Promise<void>;
}

interface Runtime {
  mf: Miniflare;
  url: URL;
  pid: number | undefined;
  /** Calls in flight on this process now. */
  active: number;
  deathReason?: string;
  /** Calls that were in flight when it was killed: with one, that call caused it and is not rerun. */
  activeAtDeath?: number;
}

const ROOT = join(import.meta.dirname, "..");
let launches: Promise<unknown> = Promise.resolve();

async function bundle(): Promise<string> {
  const result = await build({
    entryPoints: [join(ROOT, "functions/sandbox-host.worker.ts")],
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["workerd", "worker", "browser", "module", "main"],
    external: ["cloudflare:*"],
    logLevel: "silent",
  });
  return result.outputFiles[0]!.text;
}

/** Starts one sandbox workerd; launches are serialised so the new child's pid is unambiguous. */
function launch(script: string): Promise<Runtime> {
  const next = launches.then(async () => {
    const before = new Set(workerdChildren());
    const mf = new Miniflare({ modules: true, script, compatibilityDate: SANDBOX_COMPATIBILITY_DATE, workerLoaders: { LOADER: {} }, log: new Log(LogLevel.NONE) });
    const url = await mf.ready;
    return { mf, url, pid: workerdChildren().find((pid) => !before.has(pid)), active: 0 };
  });
  launches = next.catch(() => undefined);
  return next;
}

function rssMb(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** Starts the sandbox host; `url` goes into the Worker's SANDBOX_URL. */
export async function startSandboxHost(options: SandboxHostOptions = {}): Promise<SandboxHost> {
  const memoryLimitMb = options.memoryLimitMb ?? 1024;
  const graceMs = options.graceMs ?? 1000;
  const script = await bundle();
  let current = launch(script);
  let spare: Promise<Runtime> | undefined;
  const takeSpare = (): Promise<Runtime> => {
    const next = spare ?? launch(script);
    spare = stopped ? undefined : next.then(() => launch(script));
    return next;
  };
  let restarts = 0;
  let inFlight = 0;
  let stopped = false;
  // Second attempts run one at a time, so a runaway that comes back takes down only itself.
  let retryLane: Promise<unknown> = Promise.resolve();

  /** Replaces `runtime` (once, however many calls notice it is gone). */
  function restart(runtime: Runtime, reason: string): Promise<Runtime> {
    // Recorded now, while the caller's call still counts as active (a process is only ever killed once).
    runtime.deathReason ??= reason;
    runtime.activeAtDeath ??= runtime.active;
    return current.then((live) => {
      if (live !== runtime || stopped) return current;
      restarts++;
      if (runtime.pid !== undefined) {
        try {
          process.kill(runtime.pid, "SIGKILL");
        } catch {
          // already gone (it died on its own)
        }
      }
      void runtime.mf.dispose().catch(() => undefined);
      current = takeSpare();
      return current;
    });
  }

  const memoryWatch = setInterval(() => {
    if (inFlight === 0) return;
    void current.then((runtime) => {
      const mb = runtime.pid === undefined ? 0 : rssMb(runtime.pid);
      if (mb > memoryLimitMb) void restart(runtime, `the sandbox process used ${Math.round(mb)} MB, over the ${memoryLimitMb} MB limit`);
    });
  }, 100);
  memoryWatch.unref();

  async function attempt(input: RunCodeInput, body: string, tries: number): Promise<RunCodeResult> {
    const runtime = await current;
    const started = Date.now();
    const deadline = AbortSignal.timeout(input.timeoutMs + graceMs);
    runtime.active++;
    try {
      const response = await fetch(new URL("/run", runtime.url), { method: "POST", body, headers: { "content-type": "application/json" }, signal: deadline });
      return (await response.json()) as RunCodeResult;
    } catch (error) {
      if (deadline.aborted && runtime.deathReason === undefined) {
        void restart(runtime, "a snippet ran past its timeout");
        return failedResult(started, { name: "TimeoutError", message: `no answer within timeoutMs (${input.timeoutMs} ms); the sandbox was stopped` }, true);
      }
      // The process died under this call: killed for a neighbour's runaway, over memory, or crashed.
      await restart(runtime, `the sandbox process exited (${(error as Error).message})`);
      if (tries < 2 && (runtime.activeAtDeath ?? 2) > 1) {
        const retried = retryLane.then(() => attempt(input, body, tries + 1));
        retryLane = retried.catch(() => undefined);
        return retried;
      }
      return failedResult(started, { name: "SandboxKilled", message: runtime.deathReason ?? "the sandbox process was stopped" }, false);
    } finally {
      runtime.active--;
    }
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const reply = (status: number, value: unknown, type = "application/json") => {
      response.writeHead(status, { "content-type": type });
      response.end(JSON.stringify(value));
    };
    if (request.method !== "POST" || request.url !== "/run") return reply(404, { title: "not found" });
    let input: RunCodeInput;
    try {
      input = parseRunCodeRequest(JSON.parse(await readBody(request)));
    } catch (error) {
      return reply(422, { type: "about:blank", title: (error as Error).message, status: 422 }, "application/problem+json");
    }
    inFlight++;
    try {
      reply(200, await attempt(input, JSON.stringify(input), 1));
    } finally {
      inFlight--;
    }
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { "content-type": "application/problem+json" });
      response.end(JSON.stringify({ title: (error as Error).message, status: 500 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await current;
  spare = launch(script);
  return {
    url: `http://127.0.0.1:${port}`,
    restarts: () => restarts,
    pid: async () => (await current).pid,
    async stop() {
      stopped = true;
      clearInterval(memoryWatch);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      const runtimes = await Promise.all([current, spare].map((one) => one?.catch(() => undefined)));
      await Promise.all(runtimes.map((runtime) => runtime?.mf.dispose().catch(() => undefined)));
    },
  };
}
