/**
 * @module Measures `language: "python"` on the Worker's LOADER path with Pyodide from R2: the
 * latency of an isolate's first call (files read, snapshot made and stored), of later calls, and
 * of a new isolate's first call (snapshot read), and the workerd process's RSS after each.
 * Terminating snippets only. Run: `npx tsx bench/pyodide/python-loader-probe.ts`.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { Log, LogLevel, Miniflare } from "miniflare";
import { pyodideUploads } from "../../scripts/pyodide-uploads";
import { workerdListeningOn } from "../../scripts/workerd-children";
import { SANDBOX_COMPATIBILITY_DATE } from "../../src/sandbox/loader-sandbox";

const CALL = {
  language: "python",
  code: "def add(a, b):\n    return a + b\n",
  tests: "from solution import add\n\ndef test_adds():\n    assert add(2, 3) == 5\n",
  timeoutMs: 5000,
};
const CALLS = Number(process.env.CALLS ?? 4);

const rssMb = (pid: number | undefined) =>
  pid === undefined
    ? NaN
    : Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;
const script = (
  await build({
    entryPoints: [join(import.meta.dirname, "python-loader-probe-worker.ts")],
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    mainFields: ["module", "main"],
    logLevel: "silent",
  })
).outputFiles[0]!.text;
const persist = mkdtempSync(join(tmpdir(), "python-loader-probe-"));

/** One workerd (one parent isolate) over the persisted bucket; `calls` Python calls one after another. */
async function isolate(label: string, calls: number, upload: boolean): Promise<void> {
  const mf = new Miniflare({
    modules: true,
    script,
    compatibilityDate: SANDBOX_COMPATIBILITY_DATE,
    workerLoaders: { LOADER: {} },
    r2Buckets: ["BUCKET"],
    r2Persist: persist,
    log: new Log(LogLevel.NONE),
  });
  const url = await mf.ready;
  const pid = workerdListeningOn(Number(url.port));
  if (upload) {
    for (const { key, file } of pyodideUploads())
      await fetch(`${url}put?key=${encodeURIComponent(key)}`, {
        method: "POST",
        body: readFileSync(file),
      });
  }
  console.log(`${label}: workerd RSS ${rssMb(pid).toFixed(0)} MB before any Python call`);
  for (let i = 1; i <= calls; i++) {
    const answer = await (
      await fetch(`${url}run`, { method: "POST", body: JSON.stringify(CALL) })
    ).text();
    console.log(`${label} call ${i}: ${answer}; workerd RSS ${rssMb(pid).toFixed(0)} MB`);
  }
  await mf.dispose();
}

try {
  await isolate("isolate A (no snapshot stored)", CALLS, true);
  await isolate("isolate B (snapshot stored)", 2, false);
} finally {
  rmSync(persist, { recursive: true, force: true });
}
