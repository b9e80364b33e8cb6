/**
 * @module The main module of a Python sandbox isolate: it boots Pyodide (from a memory snapshot
 * when one is given, else from scratch), then runs one call: the snippet as module `solution`, its
 * `entry`, and the `test_*` functions of `tests`. Plain JavaScript text (it runs inside the loaded
 * isolate), with the pass/fail bookkeeping kept in this module's closures, out of Python's reach.
 */

/**
 * Shims Pyodide needs in a Worker: a `location` to resolve its index URL against, and an
 * `addEventListener` that does not throw on the browser events it listens for.
 */
export const PYTHON_SETUP_SOURCE = `globalThis.location ??= new URL("https://pyodide.invalid/pyodide/");
const add = globalThis.addEventListener?.bind(globalThis);
globalThis.addEventListener = (type, fn) => { try { add?.(type, fn); } catch {} };`;

/**
 * Python run before the snippet: compiles the tests first (so nothing the snippet does changes how
 * they compile) and keeps the originals of what the harness calls afterwards.
 */
const PREPARE_PY = String.raw`
import sys, json, types, inspect
def _prepare(code, tests):
    settrace, setprofile, dumps, modules, isawaitable = sys.settrace, sys.setprofile, json.dumps, sys.modules, inspect.isawaitable
    compiled_tests = compile(tests, "tests.py", "exec") if tests is not None else None
    compiled_code = compile(code, "solution.py", "exec")
    solution = types.ModuleType("solution")
    solution.__file__ = "solution.py"
    modules["solution"] = solution
    def load():
        exec(compiled_code, solution.__dict__)
    async def call_entry(name):
        fn = getattr(solution, name, None)
        if not callable(fn):
            raise TypeError("entry " + name + " is not a function of the solution")
        value = fn()
        if isawaitable(value):
            value = await value
        return "null" if value is None else dumps(value)
    def collect():
        settrace(None)
        setprofile(None)
        scope = {"__name__": "tests", "__file__": "tests.py"}
        exec(compiled_tests, scope)
        return [(key, fn) for key, fn in scope.items() if key.startswith("test") and callable(fn) and getattr(fn, "__module__", None) == "tests"]
    def unhook():
        settrace(None)
        setprofile(None)
    return load, call_entry, collect, unhook
_prepare
`;

/**
 * The boot module's source (`PREPARE_PY` embedded as a string literal). `boot(mode)` and `run(call)`
 * are two calls on one isolate, so a boot the runtime cancels can be retried before any snippet ran.
 */
export const PYTHON_HARNESS_SOURCE = String.raw`
import { WorkerEntrypoint } from "cloudflare:workers";
import "./setup.js";
import { loadPyodide } from "./pyodide.mjs";
import createPyodideModule from "./pyodide.asm.mjs";
import wasm from "./pyodide.asm.wasm";
import stdlib from "./python_stdlib.zip";
import lock from "./pyodide-lock.json";

// Captured before any snippet runs: a snippet reaches JS globals through Pyodide's "js" module.
const defineProperty = Object.defineProperty;
const parse = JSON.parse;
const stringify = JSON.stringify;
const StringOf = String;
const ErrorOf = Error;
const decoder = new TextDecoder();
const decode = (bytes) => decoder.decode(bytes, { stream: true });
const encode = TextEncoder.prototype.encode.bind(new TextEncoder());
const append = (list, item) => defineProperty(list, list.length, { value: item, writable: true, enumerable: true, configurable: true });
const PREPARE_PY = ${JSON.stringify(PREPARE_PY)};

// Workers compile no WebAssembly from bytes at run time: Pyodide's instantiate calls get the wasm module.
const instantiate = WebAssembly.instantiate.bind(WebAssembly);
const fromModule = (imports) => instantiate(wasm, imports).then((instance) => ({ instance, module: wasm }));
const realFetch = globalThis.fetch;
const originals = { instantiateStreaming: WebAssembly.instantiateStreaming, instantiate: WebAssembly.instantiate };

let py;

function lastLine(text) {
  const lines = StringOf(text).trimEnd().split("\n");
  return lines[lines.length - 1] ?? "";
}

/** A Python exception as a RunCodeError: its type, its last traceback line, the traceback. */
function describe(error) {
  if (error !== null && typeof error === "object" && typeof error.type === "string") {
    const text = StringOf(error.message ?? "");
    const last = lastLine(text);
    const prefix = error.type + ": ";
    return { name: error.type, message: last.startsWith(prefix) ? last.slice(prefix.length) : last === error.type ? "" : last, stack: text.slice(-4000) };
  }
  if (error !== null && typeof error === "object") return { name: StringOf(error.name ?? "Error"), message: StringOf(error.message ?? "") };
  return { name: "Error", message: StringOf(error) };
}

/**
 * A failed test's message: the exception line, and the failing line of tests.py from the last
 * traceback entry there (a bare assert has no message; the traceback has no source, the code was
 * compiled from a string).
 */
function testMessage(error, testsSource) {
  const described = describe(error);
  const marks = [...StringOf(described.stack ?? "").matchAll(/File "tests\.py", line (\d+)/g)];
  const where = marks.length ? (StringOf(testsSource).split("\n")[Number(marks[marks.length - 1][1]) - 1] ?? "").trim() : "";
  const head = described.message ? described.name + ": " + described.message : described.name;
  return (where ? head + " (" + where + ")" : head).slice(0, 1000);
}

export default class PythonHarness extends WorkerEntrypoint {
  /** Boots Pyodide (from the "snapshot.bin" module when asked), or makes a snapshot when "make". */
  async boot(mode) {
    const started = Date.now();
    WebAssembly.instantiateStreaming = (_response, imports) => fromModule(imports);
    WebAssembly.instantiate = (source, imports) => (source instanceof WebAssembly.Module ? instantiate(source, imports) : source.byteLength > 1000000 ? fromModule(imports) : instantiate(source, imports));
    globalThis.fetch = async (url) => {
      if (StringOf(url).endsWith("/python_stdlib.zip")) return new Response(stdlib);
      if (StringOf(url).endsWith("/pyodide.asm.wasm")) return new Response(new Uint8Array(1000001));
      throw new TypeError("no network: " + url);
    };
    try {
      const snapshot = mode === "snapshot" ? (await import("./snapshot.bin")).default : undefined;
      py = await loadPyodide({ indexURL: "/pyodide/", createPyodideModule, lockFileContents: lock, stdLibURL: "/pyodide/python_stdlib.zip", _makeSnapshot: mode === "make", ...(snapshot ? { _loadSnapshot: snapshot } : {}) });
      if (mode === "make") return { bootMs: Date.now() - started, snapshot: py.makeMemorySnapshot() };
      return { bootMs: Date.now() - started };
    } finally {
      // After boot the snippet meets the isolate's own fetch, which has no network (globalOutbound: null).
      globalThis.fetch = realFetch;
      WebAssembly.instantiateStreaming = originals.instantiateStreaming;
      WebAssembly.instantiate = originals.instantiate;
    }
  }

  /** Runs one call on the booted interpreter: { code, tests?, entry?, maxOutputBytes }. */
  async run(options) {
    let budget = options.maxOutputBytes;
    let truncated = false;
    const streams = { stdout: "", stderr: "" };
    const write = (stream, text) => {
      if (truncated) return;
      const bytes = encode(text).byteLength;
      if (bytes > budget) {
        text = text.slice(0, budget);
        truncated = true;
      }
      budget -= bytes > budget ? budget : bytes;
      streams[stream] += text;
    };
    py.setStdout({ write: (bytes) => (write("stdout", decode(bytes)), bytes.length) });
    py.setStderr({ write: (bytes) => (write("stderr", decode(bytes)), bytes.length) });
    console.log = console.info = console.debug = (...args) => write("stdout", args.map(StringOf).join(" ") + "\n");
    console.error = console.warn = (...args) => write("stderr", args.map(StringOf).join(" ") + "\n");

    let ok = true;
    let error;
    let result;
    const tests = [];
    try {
      const [load, callEntry, collect, unhook] = py.runPython(PREPARE_PY)(options.code, options.tests).toJs({ depth: 1 });
      load();
      if (options.entry) {
        const text = await callEntry(options.entry);
        if (encode(text).byteLength > options.maxOutputBytes) {
          truncated = true;
          throw new ErrorOf("the result is larger than maxOutputBytes");
        }
        result = parse(text);
      }
      if (options.tests !== undefined) {
        const cases = collect().toJs({ depth: 2 });
        // Indexed, not iterated: a snippet can patch Array.prototype[Symbol.iterator] through "js".
        if (cases.length === 0) throw new ErrorOf("the tests define no test function");
        for (let i = 0; i < cases.length; i++) {
          const name = cases[i][0];
          const fn = cases[i][1];
          unhook();
          try {
            const value = fn();
            // An async test returns an awaitable proxy.
            if (value !== null && typeof value === "object" && typeof value.then === "function") await value;
            append(tests, { name: StringOf(name), passed: true, message: "" });
          } catch (thrown) {
            ok = false;
            append(tests, { name: StringOf(name), passed: false, message: testMessage(thrown, options.tests) });
          }
        }
      }
    } catch (thrown) {
      ok = false;
      error = describe(thrown);
    }
    return { ok, result, error, stdout: streams.stdout, stderr: streams.stderr, outputTruncated: truncated, tests };
  }
}
`;
