/**
 * @module The start of a Worker module that boots Pyodide from its npm package in an isolate with
 * no network (the probes' shared part): the wasm arrives as a `wasm` module (Workers do not compile
 * WebAssembly from bytes at run time) and Pyodide's instantiate calls are pointed at it; its other
 * files arrive as data/text modules, and fetch is answered from them. A probe appends its entrypoint.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Log, LogLevel, Miniflare } from "miniflare";

/** Pyodide's files from its npm package in `dir`, as the parent Worker's modules (the probes hand them to the loaded isolate). */
export function pyodideFileModules(
  dir: string,
): Array<{ type: "Data" | "Text"; path: string; contents: Uint8Array | string }> {
  return [
    {
      type: "Data",
      path: "pyodide.asm.wasm",
      contents: readFileSync(join(dir, "pyodide.asm.wasm")),
    },
    {
      type: "Data",
      path: "python_stdlib.zip",
      contents: readFileSync(join(dir, "python_stdlib.zip")),
    },
    {
      type: "Text",
      path: "pyodide.asm.mjs.txt",
      contents: readFileSync(join(dir, "pyodide.asm.mjs"), "utf8"),
    },
    {
      type: "Text",
      path: "pyodide.mjs.txt",
      contents: readFileSync(join(dir, "pyodide.mjs"), "utf8"),
    },
    {
      type: "Text",
      path: "pyodide-lock.json.txt",
      contents: readFileSync(join(dir, "pyodide-lock.json"), "utf8"),
    },
  ];
}

/** The boot module's imports and its fetch/instantiate shims; a probe appends its entrypoint class. */
export const PYODIDE_MODULE_PRELUDE = `
import { WorkerEntrypoint } from "cloudflare:workers";
import "./setup.js";
import { loadPyodide } from "./pyodide.mjs";
import createPyodideModule from "./pyodide.asm.mjs";
import wasm from "./pyodide.asm.wasm";
import stdlib from "./python_stdlib.zip";
import lock from "./pyodide-lock.json";
const instantiate = WebAssembly.instantiate.bind(WebAssembly);
const fromModule = (imports) => instantiate(wasm, imports).then((instance) => ({ instance, module: wasm }));
WebAssembly.instantiateStreaming = (_response, imports) => fromModule(imports);
WebAssembly.instantiate = (source, imports) => (source instanceof WebAssembly.Module ? instantiate(source, imports) : source.byteLength > 1000000 ? fromModule(imports) : instantiate(source, imports));
globalThis.fetch = async (url) => {
  const name = String(url).split("/").pop();
  if (name === "python_stdlib.zip") return new Response(stdlib);
  if (name === "pyodide.asm.wasm") return new Response(new Uint8Array(1000001));
  throw new Error("no network: " + url);
};
`;

/**
 * The parent Worker's start: Pyodide's files imported, and `modules`, the loaded isolate's module
 * map with `boot` (a PYODIDE_MODULE_PRELUDE module) as `boot.js`. A probe appends its fetch handler.
 */
export function pyodideParentPrelude(boot: string): string {
  return `
import wasm from "./pyodide.asm.wasm";
import stdlib from "./python_stdlib.zip";
import asm from "./pyodide.asm.mjs.txt";
import mjs from "./pyodide.mjs.txt";
import lock from "./pyodide-lock.json.txt";
const modules = { "boot.js": ${JSON.stringify(boot)}, "setup.js": "globalThis.location ??= new URL('https://pyodide.invalid/pyodide/'); const add = globalThis.addEventListener?.bind(globalThis); globalThis.addEventListener = (type, fn) => { try { add?.(type, fn); } catch {} };", "pyodide.mjs": { js: mjs }, "pyodide.asm.mjs": { js: asm }, "pyodide.asm.wasm": { wasm }, "python_stdlib.zip": { data: stdlib }, "pyodide-lock.json": { text: lock } };
`;
}

/** A Miniflare running `parent` with a Worker Loader binding and Pyodide's files from `dir`. */
export function pyodideProbeMiniflare(dir: string, parent: string): Miniflare {
  return new Miniflare({
    modules: [
      { type: "ESModule", path: "parent.mjs", contents: parent },
      ...pyodideFileModules(dir),
    ],
    compatibilityDate: "2026-04-20",
    workerLoaders: { LOADER: {} },
    log: new Log(LogLevel.NONE),
  });
}
