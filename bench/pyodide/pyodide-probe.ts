/**
 * @module Measures whether Python (Pyodide, from its npm package, no network) runs in a Dynamic
 * Worker Loader isolate here. Workers do not compile WebAssembly from bytes at run time, so the
 * wasm arrives as a `wasm` module and Pyodide's instantiate calls are pointed at it; its other files
 * arrive as data/text modules, and fetch is answered from them (the isolate has no network).
 * Also tries workerd's own Python Workers (`py` module + python_workers flag).
 * Run: `(cd /tmp && npm pack pyodide@314.0.7 && tar xzf pyodide-314.0.7.tgz)` then
 * `PYODIDE_DIR=/tmp/package npx tsx bench/pyodide/pyodide-probe.ts`.
 */
import {
  PYODIDE_MODULE_PRELUDE,
  pyodideParentPrelude,
  pyodideProbeMiniflare,
} from "./pyodide-module-prelude";

const dir = process.env.PYODIDE_DIR ?? "/tmp/package";

const BOOT = `${PYODIDE_MODULE_PRELUDE}export default class extends WorkerEntrypoint {
  async run(code) {
    const started = Date.now();
    const py = await loadPyodide({ indexURL: "/pyodide/", createPyodideModule, lockFileContents: lock, stdLibURL: "/pyodide/python_stdlib.zip" });
    const loaded = Date.now();
    const value = py.runPython(code);
    return { value: String(value), loadMs: loaded - started, runMs: Date.now() - loaded };
  }
}`;

const PARENT = `${pyodideParentPrelude(BOOT)}export default { async fetch(request, env) {
  const mode = new URL(request.url).searchParams.get("mode");
  const started = Date.now();
  try {
    if (mode === "py") {
      const worker = env.LOADER.load({ compatibilityDate: "2026-04-20", compatibilityFlags: ["python_workers"], mainModule: "main.py",
        modules: { "main.py": { py: "from workers import WorkerEntrypoint\\nclass Default(WorkerEntrypoint):\\n    async def fetch(self, request):\\n        return 1\\n" } }, globalOutbound: null, env: {} });
      await worker.getEntrypoint().fetch("http://x/");
      return new Response("py module answered");
    }
    const worker = env.LOADER.load({ compatibilityDate: "2026-04-20", mainModule: "boot.js", globalOutbound: null, env: {},
      modules });
    const result = await worker.getEntrypoint().run("sum(i * i for i in range(10))");
    return Response.json({ ...result, totalMs: Date.now() - started });
  } catch (e) { return new Response("error after " + (Date.now() - started) + " ms: " + String((e && e.stack) || e).slice(0, 800)); }
} };`;

const mf = pyodideProbeMiniflare(dir, PARENT);
const url = await mf.ready;
for (const mode of ["py", "pyodide", "pyodide"]) {
  const answer = await Promise.race([
    fetch(`${url}?mode=${mode}`).then((r) => r.text()),
    new Promise((resolve) => setTimeout(() => resolve("no answer in 60 s"), 60_000)),
  ]);
  console.log(`${mode}: ${answer}`);
}
await mf.dispose();
