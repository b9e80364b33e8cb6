/**
 * @module bench:sandbox — one small test-suite run (a js-coder task's reference solution and its
 * unit tests) per call, calls one after another, every arm on one clock: `performance.now()` in
 * this process around one loopback `POST` (node:http, one keep-alive agent) of the same RunCodeInput body, answered once the call's
 * tests have run. The arms, each a server in a process of its own:
 *   1. a Worker Loader isolate per call, in a bare Worker on Miniflare (sandbox-bench-worker.ts),
 *   2. the local supervised sandbox host (`npm start`'s: a Node supervisor in front of its workerd, which does 1),
 *   3. `node:vm` in a Node server: a new context and the same harness and modules compiled afresh per call,
 *   4. a `node` subprocess per call, started by that server, doing 3 once (the container-style baseline, minus the container),
 *   5. the same task in Python through the sandbox host (Pyodide booted from its snapshot per call;
 *      the snapshot is made before timing, as the first Python call of a stack makes it),
 * and the HTTP round trip alone to the servers of 1 and 3 (`/noop`: the same body, answered `{}`).
 * Rounds alternate the arms (the order rotates each round); each row prints its median, the
 * p10–p90 of its calls and the range of its per-round medians.
 * Run: `npm run bench:sandbox [-- --calls 200 --spawns 20 --python-calls 10 --rounds 3] (the defaults; about a minute)`.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { Log, LogLevel, Miniflare } from "miniflare";
import { startSandboxHost } from "../../scripts/sandbox-host";
import { commandLine, integerFlag } from "../../scripts/command-line";
import { SANDBOX_COMPATIBILITY_DATE } from "../../src/sandbox/loader-sandbox";
import { CODING_TASKS, codingTests } from "../../tools/simulator/coding-tasks";
import { percentile } from "../kit/latency-table";
import { printedUrl } from "../kit/simulator-process";

const values = commandLine({
  usage: "npm run bench:sandbox -- [options]",
  description:
    "One js-coder test-suite run per call through each sandbox arm, every arm timed from Node around one loopback POST.",
  flags: {
    calls: {
      type: "string",
      default: "200",
      help: "timed calls per round for the LOADER, host, node:vm and HTTP-only rows",
    },
    spawns: { type: "string", default: "20", help: "timed calls per round of the subprocess row" },
    "python-calls": {
      type: "string",
      default: "10",
      help: "timed calls per round of the Python row (0 skips it and its snapshot)",
    },
    rounds: { type: "string", default: "3", help: "rounds; each runs every row, order rotated" },
  },
});
const CALLS = integerFlag("--calls", values.calls, 1);
const SPAWNS = integerFlag("--spawns", values.spawns, 1);
const PYTHON_CALLS = integerFlag("--python-calls", values["python-calls"], 0);
const ROUNDS = integerFlag("--rounds", values.rounds, 1);

const task = CODING_TASKS.find((one) => one.name === "isPrime")!;
const input = {
  language: "javascript",
  code: `${task.solution}\nexport { ${task.name} };`,
  tests: codingTests(task),
  timeoutMs: 5000,
};

/** isPrime and its cases in Python: `test_*` functions with plain asserts. */
const pythonInput = {
  language: "python",
  code: "def isPrime(n):\n    if n < 2:\n        return False\n    d = 2\n    while d * d <= n:\n        if n % d == 0:\n            return False\n        d += 1\n    return True\n",
  tests: [
    "import json",
    "from solution import isPrime",
    ...task.cases.map(
      ({ args, expected }, i) =>
        `def test_${i}():\n    assert isPrime(*json.loads(${JSON.stringify(JSON.stringify(args))})) == json.loads(${JSON.stringify(JSON.stringify(expected))})`,
    ),
  ].join("\n"),
  timeoutMs: 5000,
};

/** One row: where its request goes, how many per round, and what its time includes. */
interface Arm {
  label: string;
  includes: string;
  url: string;
  body: string;
  perRound: number;
  warmUp: number;
  /** Whether an answer is a pass (the `/noop` rows answer `{}`). */
  passed(answer: { tests?: Array<{ passed: boolean }> }): boolean;
  rounds: number[][];
  failures: number;
}

const allPassed = (answer: { tests?: Array<{ passed: boolean }> }) =>
  answer.tests?.length === task.cases.length && answer.tests.every((one) => one.passed);

// node:http with one keep-alive agent for every arm: undici's fetch added 2–3 ms to each request
// to workerd (a bare Worker answering {}: 3.2 ms by fetch, 0.64 ms by node:http) and not to Node's.
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** A POST of `body` (one write, with its length) and the answer read whole. */
function post(url: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      { method: "POST", agent, headers: { "content-length": Buffer.byteLength(body) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }),
        );
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(body);
  });
}

/** The one clock: a POST of the arm's body and its JSON answer read and parsed. */
async function timedCall(arm: Arm): Promise<{ ms: number; passed: boolean }> {
  const started = performance.now();
  const response = await post(arm.url, arm.body);
  const answer = JSON.parse(response.text) as { tests?: Array<{ passed: boolean }> };
  const ms = performance.now() - started;
  return { ms, passed: response.status === 200 && arm.passed(answer) };
}

/** The bench Worker (arm 1) on Miniflare. */
async function startBenchWorker(): Promise<{ url: URL; stop(): Promise<void> }> {
  const bundled = await build({
    entryPoints: [join(import.meta.dirname, "sandbox-bench-worker.ts")],
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    mainFields: ["module", "main"],
    logLevel: "silent",
  });
  const mf = new Miniflare({
    modules: true,
    script: bundled.outputFiles[0]!.text,
    compatibilityDate: SANDBOX_COMPATIBILITY_DATE,
    workerLoaders: { LOADER: {} },
    log: new Log(LogLevel.NONE),
  });
  return { url: await mf.ready, stop: () => mf.dispose() };
}

/** The Node arms' server (arms 3 and 4), bundled to one file so a subprocess starts it without tsx. */
async function startNodeArms(): Promise<{ url: string; stop(): void }> {
  const dir = mkdtempSync(join(tmpdir(), "bench-sandbox-"));
  const outfile = join(dir, "sandbox-node-arms.mjs");
  await build({
    entryPoints: [join(import.meta.dirname, "sandbox-node-arms.ts")],
    bundle: true,
    outfile,
    format: "esm",
    platform: "node",
    logLevel: "silent",
  });
  const child = spawn(
    process.execPath,
    ["--experimental-vm-modules", "--no-warnings", outfile, "serve"],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const stop = () => {
    child.kill("SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", stop);
  return { url: await printedUrl(child), stop };
}

const worker = await startBenchWorker();
const host = await startSandboxHost();
const nodeArms = await startNodeArms();
const arm = (label: string, includes: string, url: string, body: unknown, perRound: number) => ({
  label,
  includes,
  url,
  body: JSON.stringify(body),
  perRound,
  warmUp: Math.min(10, perRound),
  passed: allPassed,
  rounds: [] as number[][],
  failures: 0,
});
const arms: Arm[] = [
  arm(
    "LOADER isolate per call (bare Worker)",
    "HTTP to workerd, parse, a fresh isolate loading harness + solution + tests, the run",
    new URL("/run", worker.url).href,
    input,
    CALLS,
  ),
  arm(
    "supervised sandbox host (npm start's)",
    "HTTP to the Node supervisor, a free pool slot, HTTP on to its workerd, then as LOADER",
    `${host.url}/run`,
    input,
    CALLS,
  ),
  arm(
    "node:vm, new context + compile per call",
    "HTTP to a Node server, a new vm context, the same 3 modules compiled and the harness run",
    `${nodeArms.url}/vm`,
    input,
    CALLS,
  ),
  {
    ...arm(
      "node subprocess per call",
      "HTTP to that server, spawning node, the call on stdin, node:vm's work, exit",
      `${nodeArms.url}/spawn`,
      input,
      SPAWNS,
    ),
    warmUp: 1,
  },
  ...(PYTHON_CALLS > 0
    ? [
        {
          ...arm(
            "Python (Pyodide snapshot) via the host",
            "the host's path, then Pyodide restored from its snapshot in a fresh isolate, pytest-style run",
            `${host.url}/run`,
            pythonInput,
            PYTHON_CALLS,
          ),
          // The first Python call makes the snapshot (about 10 s here); the second is the first restored from it.
          warmUp: 2,
        },
      ]
    : []),
  {
    ...arm(
      "HTTP only: bare Worker /noop",
      "HTTP to workerd and the body read, answered {}",
      new URL("/noop", worker.url).href,
      input,
      CALLS,
    ),
    passed: () => true,
  },
  {
    ...arm(
      "HTTP only: Node server /noop",
      "HTTP to the Node arms' server and the body read, answered {}",
      `${nodeArms.url}/noop`,
      input,
      CALLS,
    ),
    passed: () => true,
  },
];

try {
  for (const one of arms)
    for (let i = 0; i < one.warmUp; i++)
      if (!(await timedCall(one)).passed) throw new Error(`${one.label}: a warm-up call failed`);
  for (let round = 0; round < ROUNDS; round++) {
    const order = arms.map((_, i) => arms[(i + round) % arms.length]!);
    for (const one of order) {
      const durations: number[] = [];
      for (let i = 0; i < one.perRound; i++) {
        const call = await timedCall(one);
        durations.push(call.ms);
        if (!call.passed) one.failures++;
      }
      one.rounds.push(durations);
    }
  }
} finally {
  nodeArms.stop();
  await host.stop();
  await worker.stop();
}

const all = (one: Arm) => one.rounds.flat();
const p50 = (one: Arm) => percentile(all(one), 50);
const base = arms[0]!;
const cell = (text: string, width: number) => text.padStart(width);
console.log(
  `bench:sandbox — "${task.name}" with ${task.cases.length} unit tests per call, one call at a time; ${ROUNDS} rounds, the row order rotated each round; ` +
    `per round ${CALLS} calls a row, ${SPAWNS} subprocesses${PYTHON_CALLS > 0 ? `, ${PYTHON_CALLS} Python calls` : ""}. ` +
    `Every time is performance.now() in the bench process around one loopback POST of the call's body and its JSON answer.`,
);
console.log(
  `${"path".padEnd(42)}${cell("calls", 6)}${cell("fail", 5)}${cell("p50 ms", 9)}${cell("p10–p90 ms", 15)}${cell("p99 ms", 9)}${cell("round p50s", 16)}${cell("calls/s", 9)}${cell("×p50 vs LOADER", 16)}`,
);
for (const one of arms) {
  const durations = all(one);
  const rounds = one.rounds.map((r) => percentile(r, 50));
  const mean = durations.reduce((a, b) => a + b, 0) / durations.length;
  console.log(
    `${one.label.padEnd(42)}${cell(String(durations.length), 6)}${cell(String(one.failures), 5)}${cell(p50(one).toFixed(2), 9)}` +
      `${cell(`${percentile(durations, 10).toFixed(2)}–${percentile(durations, 90).toFixed(2)}`, 15)}${cell(percentile(durations, 99).toFixed(2), 9)}` +
      `${cell(`${Math.min(...rounds).toFixed(2)}–${Math.max(...rounds).toFixed(2)}`, 16)}${cell((1000 / mean).toFixed(0), 9)}${cell((p50(one) / p50(base)).toFixed(2), 16)}`,
  );
}
console.log("what each row's time includes (each also the client's request and JSON parse):");
for (const one of arms) console.log(`  ${one.label}: ${one.includes}`);
console.log(
  "node:vm and the subprocess run in a Node process with no CPU or memory limit and no network isolation; the LOADER isolate has no network and, in production, a CPU limit (locally workerd enforces none: hence the host's supervisor).",
);
process.exit(arms.some((one) => one.failures > 0) ? 1 : 0);
