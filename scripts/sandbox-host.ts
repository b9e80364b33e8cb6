/**
 * @module The local sandbox host: a few workerd processes of its own (Miniflare instances running
 * functions/sandbox-host.worker.ts with a Worker Loader binding) behind a small Node server that
 * enforces the limits local workerd does not.
 *
 * Why (bench/sandbox/sandbox-spike.ts): locally a loaded isolate runs on its parent's thread and workerd
 * enforces no CPU or memory limit (`limits.cpuMs` is ignored), so `while (true) {}` wedges the
 * whole process: the parent's own timer never fires and no other request is served. So each
 * process runs ONE call at a time (a pool of `processes`, calls queue for a free one), and the Node
 * side owns the clock: a call with no answer by `timeoutMs + graceMs` is a timeout, and its process
 * is SIGKILLed and replaced; each busy process's RSS is polled and one over `memoryLimitMb` is
 * killed the same way. With one call per process a runaway has no innocent neighbours to take
 * down (a first version shared one process: under a 128-rollout js-coder batch every loop killed
 * the calls beside it, and their reruns met the next loop). A started spare makes a replacement a
 * swap: starting workerd takes 1–3 s on a loaded 2-core machine. The pool starts at the first call
 * (`eager` starts it at once): a stack that runs no code never pays for it.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Log, LogLevel, Miniflare } from "miniflare";
import type { RunCodeInput } from "../src/schemas/run-code";
import { SANDBOX_COMPATIBILITY_DATE, failedResult } from "../src/sandbox/loader-sandbox";
import { PYTHON_BOOT_ALLOWANCE_MS } from "../src/sandbox/python-sandbox";
import { parseRunCodeRequest } from "../src/sdk/run-code";
import { cachedBundle } from "./bundle-cache.mjs";
import { workerdListeningOn } from "./workerd-children";
import { withoutAddedSignalHandlers } from "./library-signal-handlers";
import { WORKERD_ESM } from "./workerd-bundle";

/** Options of the sandbox host. */
export interface SandboxHostOptions {
  /** Kill the sandbox workerd above this resident size, in MB (production's figure is 128 MB per isolate). Default 1024. */
  memoryLimitMb?: number;
  /** Time past a call's `timeoutMs` before the host is declared wedged, in ms. Default 1000. */
  graceMs?: number;
  /**
   * Time a Python call gets on top of that to boot its interpreter, in ms. Default
   * PYTHON_BOOT_ALLOWANCE_MS (5 s, production's figure). A runaway Python snippet spins its
   * process until then: a test of that path on an idle host may set less.
   */
  pythonBootAllowanceMs?: number;
  /** Port of the Node server on 127.0.0.1. Default 0 (a free one). */
  port?: number;
  /** Sandbox processes, each running one call at a time. Default 3 (about 100 MB each idle with Pyodide's files, about 320 MB after a Python call, plus one spare). */
  processes?: number;
  /**
   * Start the processes now rather than at the first call. Default false: most stacks run no code
   * (every e2e test's stack, most `edge-rollout dev` sessions), and starting the pool and its spare
   * is four workerd starts, several seconds of a stack's start on a 2-core machine (issue 27). The
   * first call waits for them; its timeout is counted from when it holds a started process.
   */
  eager?: boolean;
}

/** A running sandbox host. */
export interface SandboxHost {
  /** Base URL to set as the Worker's SANDBOX_URL. */
  url: string;
  /** How many times the sandbox workerd was killed and started again. */
  restarts(): number;
  /** The sandbox processes' pids (tests check that a runaway's process was replaced). */
  pids(): Promise<Array<number | undefined>>;
  stop(): Promise<void>;
}

interface Runtime {
  mf: Miniflare;
  url: URL;
  pid: number | undefined;
  /** Why it was killed, once it was. */
  deathReason?: string;
  /** Whether it holds the Python snapshot. */
  hasPythonSnapshot?: boolean;
}

/** One place in the pool: the process serving it now (replaced after a runaway) and whether a call holds it. */
interface Slot {
  /** Undefined until the pool starts (at the first call, unless `eager`). */
  runtime: Promise<Runtime> | undefined;
  busy: boolean;
}

const ROOT = join(import.meta.dirname, "..");
const PYODIDE = join(createRequire(import.meta.url).resolve("pyodide/package.json"), "..");
/** Longest wait for a process to make the Python snapshot (about 10 s on a loaded 2-core machine). */
const SNAPSHOT_DEADLINE_MS = 120_000;

/** The host's Worker, bundled (or taken from the bundle cache: every stack starts a host); resolves with its path. */
async function bundle(): Promise<string> {
  return cachedBundle({
    entryPoints: [join(ROOT, "functions/sandbox-host.worker.ts")],
    outfile: "sandbox-host.worker.js",
    ...WORKERD_ESM,
    conditions: [...WORKERD_ESM.conditions],
    mainFields: [...WORKERD_ESM.mainFields],
    external: ["cloudflare:*"],
    logLevel: "silent",
  });
}

/** Pyodide's files, read by workerd from node_modules (functions/sandbox-host.worker.ts's PYODIDE_*). */
const PYODIDE_BINDINGS = {
  textBlobBindings: {
    PYODIDE_MJS: join(PYODIDE, "pyodide.mjs"),
    PYODIDE_ASM_MJS: join(PYODIDE, "pyodide.asm.mjs"),
    PYODIDE_LOCK: join(PYODIDE, "pyodide-lock.json"),
  },
  dataBlobBindings: {
    PYODIDE_WASM: join(PYODIDE, "pyodide.asm.wasm"),
    PYODIDE_STDLIB: join(PYODIDE, "python_stdlib.zip"),
  },
};

/** Starts one sandbox workerd, and finds its pid by the port it listens on. */
async function launch(scriptPath: string): Promise<Runtime> {
  // Without the exit-at-once SIGINT/SIGTERM handlers Miniflare adds: Ctrl-C belongs to the stack's owner.
  // The bundle as its one module: given a script, Miniflare would parse it whole to look for imports.
  const mf = await withoutAddedSignalHandlers(
    () =>
      new Miniflare({
        modules: [{ type: "ESModule", path: scriptPath }],
        compatibilityDate: SANDBOX_COMPATIBILITY_DATE,
        workerLoaders: { LOADER: {} },
        log: new Log(LogLevel.NONE),
        ...PYODIDE_BINDINGS,
      }),
  );
  const url = await mf.ready;
  return { mf, url, pid: workerdListeningOn(Number(url.port)) };
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
  const pythonBootAllowanceMs = options.pythonBootAllowanceMs ?? PYTHON_BOOT_ALLOWANCE_MS;
  // Bundled now, so a Worker that does not build fails the stack's start, not its first call.
  const scriptPath = await bundle();
  const slots: Slot[] = Array.from({ length: Math.max(1, options.processes ?? 3) }, () => ({
    runtime: undefined,
    busy: false,
  }));
  const waiting: Array<(slot: Slot) => void> = [];
  let spare: Promise<Runtime> | undefined;
  let restarts = 0;
  let stopped = false;
  let started: Promise<void> | undefined;

  /**
   * Starts every process of the pool, then the spare, and resolves once all are up (once; each
   * call and `pids()` ask). The first call waits for the spare too: a workerd starting beside a
   * snippet on a loaded 2-core machine took its CPU and ran it past a 2 s timeout.
   */
  const start = (): Promise<void> =>
    (started ??= (async () => {
      for (const slot of slots) slot.runtime = launch(scriptPath);
      await Promise.all(slots.map((slot) => slot.runtime));
      if (stopped) return;
      spare = launch(scriptPath);
      await spare;
    })());

  const takeSpare = (): Promise<Runtime> => {
    const next = spare ?? launch(scriptPath);
    spare = stopped ? undefined : next.then(() => launch(scriptPath));
    return next;
  };

  const acquire = (): Promise<Slot> => {
    const free = slots.find((slot) => !slot.busy);
    if (free) {
      free.busy = true;
      return Promise.resolve(free);
    }
    return new Promise((resolve) => waiting.push(resolve));
  };
  const release = (slot: Slot): void => {
    const next = waiting.shift();
    if (next) next(slot);
    else slot.busy = false;
  };

  /** Kills the slot's process (if it is still `runtime`) and puts the spare in its place. */
  function replace(slot: Slot, runtime: Runtime, reason: string): void {
    runtime.deathReason ??= reason;
    void slot.runtime?.then((live) => {
      if (live !== runtime || stopped) return;
      restarts++;
      if (runtime.pid !== undefined) {
        try {
          process.kill(runtime.pid, "SIGKILL");
        } catch {
          // already gone (it died on its own)
        }
      }
      void runtime.mf.dispose().catch(() => undefined);
      slot.runtime = takeSpare();
    });
  }

  const running = new Map<Slot, Runtime>();
  const memoryWatch = setInterval(() => {
    for (const [slot, runtime] of running) {
      const mb = runtime.pid === undefined ? 0 : rssMb(runtime.pid);
      if (mb > memoryLimitMb)
        replace(
          slot,
          runtime,
          `the sandbox process used ${Math.round(mb)} MB, over the ${memoryLimitMb} MB limit`,
        );
    }
  }, 100);
  memoryWatch.unref();

  /**
   * The Python snapshot is made once, by the first process a Python call holds (about 10 s), and
   * copied into each other process at its first Python call (30 MB over loopback), so a process
   * that replaced a runaway does not make it again.
   */
  let pythonSnapshot: Promise<ArrayBuffer> | undefined;
  async function givePythonSnapshot(runtime: Runtime): Promise<void> {
    if (runtime.hasPythonSnapshot) return;
    const at = new URL("/python/snapshot", runtime.url);
    const signal = AbortSignal.timeout(SNAPSHOT_DEADLINE_MS);
    if (pythonSnapshot === undefined) {
      pythonSnapshot = fetch(at, { signal }).then(async (response) => {
        if (!response.ok)
          throw new Error(`the Python snapshot was not made: ${await response.text()}`);
        return response.arrayBuffer();
      });
      pythonSnapshot.catch(() => (pythonSnapshot = undefined));
    } else {
      const bytes = await pythonSnapshot;
      const response = await fetch(at, { method: "PUT", body: bytes, signal });
      if (!response.ok)
        throw new Error(`the Python snapshot was not installed: ${response.status}`);
    }
    await pythonSnapshot;
    runtime.hasPythonSnapshot = true;
  }

  async function attempt(
    input: RunCodeInput,
    body: string,
  ): Promise<{ status: number; answer: unknown }> {
    await start();
    const slot = await acquire();
    try {
      const runtime = await slot.runtime!;
      if (input.language === "python") await givePythonSnapshot(runtime);
      const started = Date.now();
      // A Python call also boots its interpreter from the snapshot before the snippet's clock starts.
      const deadline = AbortSignal.timeout(
        input.timeoutMs + graceMs + (input.language === "python" ? pythonBootAllowanceMs : 0),
      );
      running.set(slot, runtime);
      try {
        const response = await fetch(new URL("/run", runtime.url), {
          method: "POST",
          body,
          headers: { "content-type": "application/json" },
          signal: deadline,
        });
        return { status: response.status, answer: await response.json() };
      } catch (error) {
        if (deadline.aborted && runtime.deathReason === undefined) {
          replace(slot, runtime, "a snippet ran past its timeout");
          return {
            status: 200,
            answer: failedResult(
              started,
              {
                name: "TimeoutError",
                message: `no answer within timeoutMs (${input.timeoutMs} ms); the sandbox was stopped`,
              },
              true,
            ),
          };
        }
        // Killed over memory, or crashed: this call was the only one on the process, so it was the cause.
        replace(slot, runtime, `the sandbox process exited (${(error as Error).message})`);
        return {
          status: 200,
          answer: failedResult(
            started,
            {
              name: "SandboxKilled",
              message: runtime.deathReason ?? "the sandbox process was stopped",
            },
            false,
          ),
        };
      } finally {
        running.delete(slot);
      }
    } finally {
      release(slot);
    }
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const reply = (status: number, value: unknown, type = "application/json") => {
      response.writeHead(status, { "content-type": type });
      response.end(JSON.stringify(value));
    };
    if (request.method !== "POST" || request.url !== "/run")
      return reply(404, { title: "not found" });
    let input: RunCodeInput;
    try {
      input = parseRunCodeRequest(JSON.parse(await readBody(request)));
    } catch (error) {
      return reply(
        422,
        { type: "about:blank", title: (error as Error).message, status: 422 },
        "application/problem+json",
      );
    }
    const { status, answer } = await attempt(input, JSON.stringify(input));
    reply(status, answer, status === 200 ? "application/json" : "application/problem+json");
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent)
        response.writeHead(500, { "content-type": "application/problem+json" });
      response.end(JSON.stringify({ title: (error as Error).message, status: 500 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  if (options.eager) await start();
  return {
    url: `http://127.0.0.1:${port}`,
    restarts: () => restarts,
    async pids() {
      await start();
      return Promise.all(slots.map(async (slot) => (await slot.runtime!).pid));
    },
    async stop() {
      stopped = true;
      clearInterval(memoryWatch);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await started?.catch(() => undefined);
      const runtimes = await Promise.all(
        [...slots.map((slot) => slot.runtime), spare].map((one) => one?.catch(() => undefined)),
      );
      await Promise.all(runtimes.map((runtime) => runtime?.mf.dispose().catch(() => undefined)));
    },
  };
}
