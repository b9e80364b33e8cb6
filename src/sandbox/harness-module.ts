/**
 * @module The module loaded as the sandbox's main module: it captures console output up to a byte
 * budget, imports the snippet (`./solution.js`), calls its `entry`, then imports `./tests.js` and
 * runs the cases it registered with `test(name, fn)`. It is plain JavaScript text, because it runs
 * inside the loaded isolate, not in this bundle.
 */

/**
 * The harness source. `assert` and `test` are installed as non-writable globals and the
 * primordials they use are captured before the snippet loads, so a snippet cannot pass its tests by
 * reassigning `assert`, and the harness's own bookkeeping uses no patchable built-in (no
 * `Array.prototype.push`, no iterators: a snippet that patched them could drop failing cases). A
 * case counts only when `test()` is called from tests.js's top level while it loads (the caller's
 * stack frame is checked, with `Error.prepareStackTrace` locked first), so a snippet cannot add
 * passing cases of its own. A snippet can still tamper with shared built-ins its tests use (see
 * docs/authoring.md).
 */
export const HARNESS_SOURCE = String.raw`
import { WorkerEntrypoint } from "cloudflare:workers";

const stringify = JSON.stringify;
const parse = JSON.parse;
const is = Object.is;
const keysOf = Object.keys;
const isArray = Array.isArray;
const defineProperty = Object.defineProperty;
const StringOf = String;
const ErrorOf = Error;
const encode = TextEncoder.prototype.encode.bind(new TextEncoder());
const append = (list, item) => defineProperty(list, list.length, { value: item, writable: true, enumerable: true, configurable: true });
// Locked before any snippet runs, so the stack test() reads is V8's own.
defineProperty(Error, "prepareStackTrace", { value: undefined, writable: false, configurable: false });
defineProperty(Error, "stackTraceLimit", { value: 10, writable: false, configurable: false });
const CALLER_FILE = /([^\s()/]+):\d+:\d+\)?$/;
/** The file of the frame that called the function calling this (tests.js for a legitimate test()). */
function callerFile() {
  const frames = StringOf(new ErrorOf().stack).split("\n");
  const match = CALLER_FILE.exec(StringOf(frames[3] ?? "").trim());
  return match ? match[1] : "";
}

function show(value) {
  if (typeof value === "string") return value;
  try { const text = stringify(value); return text === undefined ? String(value) : text; } catch { return String(value); }
}

function deepEqual(a, b) {
  if (is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (isArray(a) !== isArray(b)) return false;
  const ka = keysOf(a), kb = keysOf(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) if (!deepEqual(a[ka[i]], b[ka[i]])) return false;
  return true;
}

class AssertionError extends Error {}
AssertionError.prototype.name = "AssertionError";

const assert = Object.freeze({
  ok(value, message) { if (!value) throw new AssertionError(message ?? "expected a truthy value, got " + show(value)); },
  equal(actual, expected, message) { if (!is(actual, expected) && actual !== expected) throw new AssertionError(message ?? "expected " + show(expected) + ", got " + show(actual)); },
  deepEqual(actual, expected, message) { if (!deepEqual(actual, expected)) throw new AssertionError(message ?? "expected " + show(expected) + ", got " + show(actual)); },
  throws(fn, message) { let threw = false; try { fn(); } catch { threw = true; } if (!threw) throw new AssertionError(message ?? "expected the call to throw"); },
});

function describe(error) {
  if (error !== null && typeof error === "object") {
    return { name: String(error.name ?? "Error"), message: String(error.message ?? ""), stack: typeof error.stack === "string" ? error.stack.slice(0, 4000) : undefined };
  }
  return { name: "Error", message: show(error) };
}

export default class Harness extends WorkerEntrypoint {
  async run(options) {
    let budget = options.maxOutputBytes;
    let truncated = false;
    const streams = { stdout: "", stderr: "" };
    const write = (stream, args) => {
      if (truncated) return;
      let text = "";
      for (let i = 0; i < args.length; i++) text += (i ? " " : "") + show(args[i]);
      text += "\n";
      const bytes = encode(text).byteLength;
      if (bytes > budget) {
        text = text.slice(0, budget);
        truncated = true;
      }
      budget -= Math.min(bytes, budget);
      streams[stream] += text;
    };
    console.log = console.info = console.debug = (...args) => write("stdout", args);
    console.error = console.warn = (...args) => write("stderr", args);
    const cases = [];
    let registering = false;
    const test = (name, fn) => {
      if (!registering || callerFile() !== "tests.js") throw new ErrorOf("test() counts only when called at the top level of the tests module");
      append(cases, { name: StringOf(name), fn });
    };
    defineProperty(globalThis, "assert", { value: assert, writable: false, configurable: false });
    defineProperty(globalThis, "test", { value: Object.freeze(test), writable: false, configurable: false });

    let ok = true;
    let error;
    let result;
    try {
      const solution = await import("./solution.js");
      if (options.entry) {
        if (typeof solution[options.entry] !== "function") throw new TypeError("entry " + options.entry + " is not an exported function");
        const value = await solution[options.entry]();
        const text = value === undefined ? "null" : stringify(value);
        if (text !== undefined && encode(text).byteLength > options.maxOutputBytes) {
          truncated = true;
          throw new RangeError("the result is larger than maxOutputBytes");
        }
        result = text === undefined ? null : parse(text);
      }
      if (options.hasTests) {
        registering = true;
        try {
          await import("./tests.js");
        } finally {
          registering = false;
        }
        // A tests module registers cases; none means something stopped them (tests that cannot fail must not score).
        if (cases.length === 0) throw new ErrorOf("the tests registered no case");
      }
    } catch (thrown) {
      ok = false;
      error = describe(thrown);
    }
    const tests = [];
    if (error === undefined) {
      for (let i = 0; i < cases.length; i++) {
        const one = cases[i];
        try {
          await one.fn();
          append(tests, { name: one.name, passed: true, message: "" });
        } catch (thrown) {
          ok = false;
          append(tests, { name: one.name, passed: false, message: describe(thrown).message.slice(0, 1000) });
        }
      }
    }
    return { ok, result, error, stdout: streams.stdout, stderr: streams.stderr, outputTruncated: truncated, tests };
  }
}
`;
