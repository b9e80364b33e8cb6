/**
 * @module bench:sandbox — one small test-suite run (a js-coder task's reference solution and its
 * unit tests), called one after another, four ways side by side in one run:
 *   1. a LOADER isolate per call, timed inside the Worker (what production does per call),
 *   2. the same through the local supervised sandbox host (HTTP hop + Node supervisor; what `npm start` does),
 *   3. Node's `vm` module, a fresh context per call, in the bare loop (no isolation from the process),
 *   4. a `node` subprocess per call (the container-style baseline, minus the container),
 *   5. the same task in Python through the sandbox host (Pyodide booted from its snapshot per call;
 *      the snapshot is made before timing, as the first Python call of a stack makes it).
 * Run: `npm run bench:sandbox [-- --calls 200 --spawns 30 --python-calls 20]`.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createContext, Script } from "node:vm";
import { build } from "esbuild";
import { Log, LogLevel, Miniflare } from "miniflare";
import { startSandboxHost } from "../scripts/sandbox-host";
import { SANDBOX_COMPATIBILITY_DATE } from "../src/sandbox/loader-sandbox";
import { CODING_TASKS, codingTests } from "../tools/simulator/coding-tasks";
import { percentile } from "./latency-table";

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => {
  const at = args.indexOf(`--${name}`);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const CALLS = flag("calls", 200);
const SPAWNS = flag("spawns", 30);
const PYTHON_CALLS = flag("python-calls", 20);

const task = CODING_TASKS.find((one) => one.name === "isPrime")!;
const solution = `${task.solution}\nexport { ${task.name} };`;
const tests = codingTests(task);
const input = { language: "javascript", code: solution, tests, timeoutMs: 5000 };

/** The same solution and tests as one classic script (no modules: `vm.Script` and `node -e` alike). */
const TEST_RUNNER = `
const cases = []; const test = (name, fn) => cases.push({ name, fn });
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const assert = { deepEqual(a, b) { if (!same(a, b)) throw new Error("expected " + JSON.stringify(b) + ", got " + JSON.stringify(a)); } };
`;
const script = `${TEST_RUNNER}\n${task.solution}\n${tests.split("\n").slice(1).join("\n")}\nlet passed = 0; for (const c of cases) { try { c.fn(); passed++; } catch {} } passed;`;

interface Row {
  label: string;
  durations: number[];
  failures: number;
}

async function loaderInWorker(): Promise<Row> {
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
  const url = await mf.ready;
  const loop = async (n: number) =>
    (await (await fetch(url, { method: "POST", body: JSON.stringify({ input, n }) })).json()) as {
      durations: number[];
      failures: number;
    };
  await loop(10); // warm-up
  const result = await loop(CALLS);
  await mf.dispose();
  return { label: "LOADER isolate per call (in the Worker)", ...result };
}

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

async function supervisedHost(): Promise<Row[]> {
  const host = await startSandboxHost();
  const call = async () =>
    (await (
      await fetch(`${host.url}/run`, { method: "POST", body: JSON.stringify(input) })
    ).json()) as { tests: Array<{ passed: boolean }> };
  for (let i = 0; i < 10; i++) await call();
  const durations: number[] = [];
  let failures = 0;
  for (let i = 0; i < CALLS; i++) {
    const started = performance.now();
    const result = await call();
    durations.push(performance.now() - started);
    if (!result.tests.every((one) => one.passed)) failures++;
  }
  const python = { durations: [] as number[], failures: 0 };
  const callPython = async () =>
    (await (
      await fetch(`${host.url}/run`, { method: "POST", body: JSON.stringify(pythonInput) })
    ).json()) as { tests: Array<{ passed: boolean }> };
  for (let i = 0; i < PYTHON_CALLS + 2; i++) {
    const started = performance.now();
    const result = await callPython();
    if (i < 2) continue; // warm-up: the first call makes the snapshot (about 10 s here)
    python.durations.push(performance.now() - started);
    if (result.tests.length !== task.cases.length || !result.tests.every((one) => one.passed))
      python.failures++;
  }
  await host.stop();
  return [
    { label: "supervised sandbox host (local, via HTTP)", durations, failures },
    { label: "Python (Pyodide snapshot) via the host", ...python },
  ];
}

function nodeVm(): Row {
  const compiled = new Script(script);
  const durations: number[] = [];
  let failures = 0;
  for (let i = 0; i < CALLS + 10; i++) {
    const started = performance.now();
    const passed = compiled.runInContext(createContext({}), { timeout: 5000 }) as number;
    if (i >= 10) durations.push(performance.now() - started);
    if (i >= 10 && passed !== task.cases.length) failures++;
  }
  return { label: "node:vm fresh context per call (bare loop)", durations, failures };
}

function spawnOnce(): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        "-e",
        `process.stdout.write(String((() => { ${script.replace(/passed;$/, "return passed;")} })()))`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("error", reject);
    child.on("close", () => resolve(Number(out)));
  });
}

async function nodeSubprocess(): Promise<Row> {
  await spawnOnce();
  const durations: number[] = [];
  let failures = 0;
  for (let i = 0; i < SPAWNS; i++) {
    const started = performance.now();
    const passed = await spawnOnce();
    durations.push(performance.now() - started);
    if (passed !== task.cases.length) failures++;
  }
  return { label: "node subprocess per call", durations, failures };
}

const [loader, [host, python]] = [await loaderInWorker(), await supervisedHost()];
const rows = [loader!, host!, nodeVm(), await nodeSubprocess(), python!];
const base = rows[0]!;
const p50 = (row: Row) => percentile(row.durations, 50);
const perSecond = (row: Row) =>
  (1000 * row.durations.length) / row.durations.reduce((a, b) => a + b, 0);
console.log(
  `bench:sandbox — "${task.name}" with ${task.cases.length} unit tests, calls one at a time (${CALLS} per row, ${SPAWNS} subprocesses, ${PYTHON_CALLS} Python calls)`,
);
console.log(
  `${"path".padEnd(44)}${"calls".padStart(7)}${"fail".padStart(6)}${"p50 ms".padStart(9)}${"p99 ms".padStart(9)}${"calls/s".padStart(10)}${"×p50 vs LOADER".padStart(16)}`,
);
for (const row of rows) {
  console.log(
    `${row.label.padEnd(44)}${String(row.durations.length).padStart(7)}${String(row.failures).padStart(6)}${p50(row).toFixed(2).padStart(9)}${percentile(row.durations, 99).toFixed(2).padStart(9)}${perSecond(row).toFixed(0).padStart(10)}${(p50(row) / p50(base)).toFixed(2).padStart(16)}`,
  );
}
console.log(
  "LOADER times are Date.now() inside workerd (1 ms resolution); the others performance.now() in Node. node:vm shares the process: no CPU or memory limit, no network isolation.",
);
process.exit(0);
