/**
 * @module The module loaded as the sandbox's main module: it captures console output up to a byte
 * budget, imports the snippet (`./solution.js`), calls its `entry`, then imports `./tests.js` and
 * runs the cases it registered with `test(name, fn)`. It is plain JavaScript text, because it runs
 * inside the loaded isolate, not in this bundle.
 */

/**
 * The harness source. `assert` and `test` are installed as non-writable globals and the
 * primordials they use are captured before the snippet loads, so a snippet cannot pass its tests by
 * reassigning `assert`; a snippet can still tamper with shared built-ins (see docs/authoring.md).
 */
export const HARNESS_SOURCE = String.raw`
import { WorkerEntrypoint } from "cloudflare:workers";

const stringify = JSON.stringify;
const parse = JSON.parse;
const is = Object.is;
const keysOf = Object.keys;
const isArray = Array.isArray;
const encoder = new TextEncoder();

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
  for (const k of ka) if (!deepEqual(a[k], b[k])) return false;
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
    const streams = { stdout: [], stderr: [] };
    const write = (stream, args) => {
      if (truncated) return;
      let text = args.map(show).join(" ") + "\n";
      const bytes = encoder.encode(text).byteLength;
      if (bytes > budget) {
        text = text.slice(0, budget);
        truncated = true;
      }
      budget -= Math.min(bytes, budget);
      streams[stream].push(text);
    };
    console.log = console.info = console.debug = (...args) => write("stdout", args);
    console.error = console.warn = (...args) => write("stderr", args);
    const cases = [];
    Object.defineProperty(globalThis, "assert", { value: assert, writable: false, configurable: false });
    Object.defineProperty(globalThis, "test", { value: Object.freeze((name, fn) => { cases.push({ name: String(name), fn }); }), writable: false, configurable: false });

    let ok = true;
    let error;
    let result;
    try {
      const solution = await import("./solution.js");
      if (options.entry) {
        if (typeof solution[options.entry] !== "function") throw new TypeError("entry " + options.entry + " is not an exported function");
        const value = await solution[options.entry]();
        const text = value === undefined ? "null" : stringify(value);
        if (text !== undefined && encoder.encode(text).byteLength > options.maxOutputBytes) {
          truncated = true;
          throw new RangeError("the result is larger than maxOutputBytes");
        }
        result = text === undefined ? null : parse(text);
      }
      if (options.hasTests) await import("./tests.js");
    } catch (thrown) {
      ok = false;
      error = describe(thrown);
    }
    const tests = [];
    if (error === undefined) {
      for (const one of cases) {
        try {
          await one.fn();
          tests.push({ name: one.name, passed: true, message: "" });
        } catch (thrown) {
          ok = false;
          tests.push({ name: one.name, passed: false, message: describe(thrown).message.slice(0, 1000) });
        }
      }
    }
    return { ok, result, error, stdout: streams.stdout.join(""), stderr: streams.stderr.join(""), outputTruncated: truncated, tests };
  }
}
`;
