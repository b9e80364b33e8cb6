/**
 * @module Spike (issue 28, item 0): what a runaway snippet does to a local workerd when it runs in
 * a Dynamic Worker Loader isolate. Each case gets a throwaway Miniflare whose parent Worker loads the
 * snippet with `env.LOADER.load()` and races it against a parent-side `setTimeout`; a Node-side
 * watchdog then checks whether the same workerd still answers a `/ping`, and kills the process if it
 * does not. Run: `npx tsx bench/sandbox/sandbox-spike.ts` (about a minute; it prints one line per case).
 */
import type { Readable } from "node:stream";
import { Log, LogLevel, Miniflare } from "miniflare";
import { workerdChildren } from "../../scripts/workerd-children";

/** The parent Worker: `/run` loads the posted snippet in a fresh isolate, `/ping` proves liveness. */
const PARENT = `
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/ping") return new Response("pong");
    const { code, cpuMs, timeoutMs } = await request.json();
    const worker = env.LOADER.load({
      compatibilityDate: "2026-04-20",
      mainModule: "main.js",
      modules: { "main.js": "import { WorkerEntrypoint } from 'cloudflare:workers';\\nexport default class extends WorkerEntrypoint { async run() { " + code + " } }" },
      globalOutbound: null,
      env: {},
      ...(cpuMs ? { limits: { cpuMs } } : {}),
    });
    const started = Date.now();
    let timer;
    const timeout = new Promise((resolve) => { timer = setTimeout(() => resolve({ parentTimeout: true }), timeoutMs); });
    const outcome = await Promise.race([
      worker.getEntrypoint().run().then((value) => ({ value: typeof value === "string" ? "string of " + value.length : value }), (error) => ({ error: String(error && error.message || error).slice(0, 200) })),
      timeout,
    ]);
    clearTimeout(timer);
    return Response.json({ ...outcome, ms: Date.now() - started });
  },
};`;

/** One runaway behaviour. */
interface SpikeCase {
  name: string;
  code: string;
  cpuMs?: number;
}

const CASES: SpikeCase[] = [
  { name: "busy loop, no limits", code: "while (true) {}" },
  { name: "busy loop, limits.cpuMs=50", code: "while (true) {}", cpuMs: 50 },
  {
    name: "CPU-heavy finite loop (~3 s), parent timeout 500 ms",
    code: "let x = 0; for (let i = 0; i < 3e9; i++) x = (x + i) % 7; return x;",
  },
  {
    name: "unbounded allocation",
    code: "const keep = []; while (true) keep.push(new Array(1e6).fill(Math.random()));",
  },
  {
    name: "huge console output (50 MB)",
    code: "const line = 'x'.repeat(1e6); for (let i = 0; i < 50; i++) console.log(line); return 'done';",
  },
  { name: "huge return value (100 MB string)", code: "return 'x'.repeat(1e8);" },
  { name: "await forever (no CPU)", code: "await new Promise(() => {});" },
];

async function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T | "deadline"> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<"deadline">((resolve) => {
    timer = setTimeout(() => resolve("deadline"), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

async function runCase(spike: SpikeCase): Promise<string> {
  const before = new Set(workerdChildren());
  const mf = new Miniflare({
    modules: true,
    script: PARENT,
    compatibilityDate: "2026-04-20",
    compatibilityFlags: ["nodejs_compat"],
    workerLoaders: { LOADER: {} },
    log: new Log(LogLevel.NONE),
    handleRuntimeStdio: (stdout: Readable, stderr: Readable) => {
      // The 50 MB console case writes to workerd's stdout: drain it here rather than into the terminal.
      stdout.resume();
      stderr.resume();
    },
  });
  const url = await mf.ready;
  const pid = workerdChildren().find((candidate) => !before.has(candidate));
  const started = Date.now();
  const run = fetch(new URL("/run", url), {
    method: "POST",
    body: JSON.stringify({ code: spike.code, cpuMs: spike.cpuMs, timeoutMs: 500 }),
  })
    .then(async (response) => `${response.status} ${(await response.text()).slice(0, 240)}`)
    .catch((error: unknown) => `fetch failed: ${(error as Error).message}`);
  const answer = await withDeadline(run, 6000);
  const answerMs = Date.now() - started;
  const ping = await withDeadline(
    fetch(new URL("/ping", url))
      .then((r) => r.text())
      .catch((error: unknown) => `ping failed: ${(error as Error).message}`),
    2000,
  );
  const alive = pid !== undefined && isAlive(pid);
  let cleanup = "disposed";
  const disposed = await withDeadline(
    mf.dispose().then(() => "ok"),
    3000,
  );
  if (disposed === "deadline" && pid !== undefined && isAlive(pid)) {
    process.kill(pid, "SIGKILL");
    cleanup = "dispose hung: SIGKILLed workerd";
  }
  return `${spike.name}\n  answer after ${answerMs} ms: ${answer}\n  then /ping: ${ping}; workerd process alive: ${alive}; ${cleanup}`;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

for (const spike of CASES) console.log(await runCase(spike));
process.exit(0);
