/**
 * @module Measures Pyodide's boot in a fresh Worker Loader isolate three ways: a full
 * `loadPyodide`, a boot from a memory snapshot made once in another isolate, and the same with the
 * isolate cached by id. Run: `npx tsx bench/pyodide/pyodide-snapshot-probe.ts`.
 */
import { join } from "node:path";
import {
  PYODIDE_MODULE_PRELUDE,
  pyodideParentPrelude,
  pyodideProbeMiniflare,
} from "./pyodide-module-prelude";

const dir = join(import.meta.dirname, "../../node_modules/pyodide");

const BOOT = `${PYODIDE_MODULE_PRELUDE}export default class extends WorkerEntrypoint {
  async make() {
    const started = Date.now();
    const py = await loadPyodide({ indexURL: "/pyodide/", createPyodideModule, lockFileContents: lock, stdLibURL: "/pyodide/python_stdlib.zip", _makeSnapshot: true });
    const loaded = Date.now();
    const snap = py.makeMemorySnapshot();
    return { bytes: snap, loadMs: loaded - started, snapMs: Date.now() - loaded };
  }
  async run(code, useSnapshot) {
    const snapshot = useSnapshot ? (await import("./snapshot.bin")).default : undefined;
    const started = Date.now();
    const py = await loadPyodide({ indexURL: "/pyodide/", createPyodideModule, lockFileContents: lock, stdLibURL: "/pyodide/python_stdlib.zip", ...(snapshot ? { _loadSnapshot: snapshot } : {}) });
    const loaded = Date.now();
    const value = py.runPython(code);
    return { value: String(value), loadMs: loaded - started, runMs: Date.now() - loaded };
  }
}`;

const PARENT = `${pyodideParentPrelude(BOOT)}let snapshot;
let n = 0;
export default { async fetch(request, env) {
  const mode = new URL(request.url).searchParams.get("mode");
  const started = Date.now();
  try {
    const mods = snapshot ? { ...modules, "snapshot.bin": { data: snapshot } } : modules;
    const load = () => mode === "cached" ? env.LOADER.get("pyodide", () => ({ compatibilityDate: "2026-04-20", mainModule: "boot.js", globalOutbound: null, env: {}, modules: mods })) : env.LOADER.load({ compatibilityDate: "2026-04-20", mainModule: "boot.js", globalOutbound: null, env: {}, modules: mods });
    const worker = load();
    if (mode === "make") {
      const made = await worker.getEntrypoint().make();
      snapshot = made.bytes;
      return Response.json({ size: made.bytes.byteLength, loadMs: made.loadMs, snapMs: made.snapMs, totalMs: Date.now() - started });
    }
    const result = await worker.getEntrypoint().run("sum(i * i for i in range(10))", mode !== "plain");
    return Response.json({ ...result, totalMs: Date.now() - started });
  } catch (e) { return new Response("error after " + (Date.now() - started) + " ms: " + String((e && e.stack) || e).slice(0, 800)); }
} };`;

const mf = pyodideProbeMiniflare(dir, PARENT);
const url = await mf.ready;
for (const mode of (process.env.MODES ?? "plain,make,snap,snap,snap,cached,cached,cached").split(
  ",",
)) {
  const answer = await Promise.race([
    fetch(`${url}?mode=${mode}`).then((r) => r.text()),
    new Promise((resolve) => setTimeout(() => resolve("no answer in 60 s"), 60_000)),
  ]);
  console.log(`${mode}: ${answer}`);
}
await mf.dispose();
