/**
 * @module A CodeSandbox on a Dynamic Worker Loader binding: every call loads a fresh isolate with
 * `globalOutbound: null` (no fetch, no connect), an empty `env`, no compatibility flags (so no
 * `node:` modules) and `limits.cpuMs` = the call's timeout, and races it against a wall-clock timer.
 *
 * In production `limits.cpuMs` is what stops a busy loop: the platform throws in the isolate once
 * it has used that much CPU (developers.cloudflare.com/dynamic-workers/usage/limits). Locally
 * workerd enforces neither CPU nor memory and runs the isolate on the caller's thread, so a busy
 * loop wedges the whole process and the timer never fires: locally this runs inside a separate,
 * supervised workerd (scripts/sandbox-host.ts) that is killed and restarted on a runaway.
 */
import type { CodeSandbox, RunCodeError, RunCodeInput, RunCodeResult } from "../schemas/run-code";
import { HARNESS_SOURCE } from "./harness-module";
import type { PythonSandbox } from "./python-sandbox";
import { stripTypes } from "./strip-types";
import type { LoaderBinding } from "./worker-loader";

/** The sandbox's compatibility date: fixed, so the snippet's runtime does not move with the parent's. */
export const SANDBOX_COMPATIBILITY_DATE = "2026-04-20";

/** What the harness answers (everything but the timing fields). */
type HarnessAnswer = Omit<RunCodeResult, "timedOut" | "durationMs">;

interface HarnessEntrypoint {
  run(options: {
    entry: string | undefined;
    hasTests: boolean;
    maxOutputBytes: number;
  }): Promise<HarnessAnswer>;
}

function describe(error: unknown): RunCodeError {
  if (error instanceof Error)
    return {
      name: error.name,
      message: error.message,
      ...(error.stack ? { stack: error.stack.slice(0, 4000) } : {}),
    };
  return { name: "Error", message: String(error) };
}

/** A result that never reached the harness: a load, transpile or runtime failure, or the timeout. */
export function failedResult(
  started: number,
  error: RunCodeError,
  timedOut: boolean,
): RunCodeResult {
  return {
    ok: false,
    stdout: "",
    stderr: "",
    error,
    timedOut,
    outputTruncated: false,
    durationMs: Date.now() - started,
    tests: [],
  };
}

function modulesFor(input: RunCodeInput): Record<string, string> {
  const prepare = (source: string) =>
    input.language === "typescript" ? stripTypes(source) : source;
  const modules: Record<string, string> = {
    "harness.js": HARNESS_SOURCE,
    "solution.js": prepare(input.code),
  };
  if (input.tests !== undefined) modules["tests.js"] = prepare(input.tests);
  return modules;
}

/**
 * A sandbox that loads each call into a fresh isolate through `loader` (the `LOADER` binding);
 * `python` runs `language: "python"` calls (the sandbox host's, or the Worker's from R2; without
 * it they throw).
 */
export function createLoaderSandbox(
  loader: LoaderBinding,
  python?: Pick<PythonSandbox, "run">,
): CodeSandbox {
  return {
    async run(input: RunCodeInput): Promise<RunCodeResult> {
      if (input.language === "python") {
        if (!python)
          throw new Error(
            'runCode: language "python" needs the Pyodide runtime: the sandbox host (SANDBOX_URL) or an R2 bucket holding it (docs/authoring.md, "Python")',
          );
        return python.run(input, failedResult);
      }
      const started = Date.now();
      let modules: Record<string, string>;
      try {
        modules = modulesFor(input);
      } catch (error) {
        return failedResult(started, describe(error), false);
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), input.timeoutMs);
      });
      try {
        const worker = loader.load({
          compatibilityDate: SANDBOX_COMPATIBILITY_DATE,
          mainModule: "harness.js",
          modules,
          env: {},
          globalOutbound: null,
          limits: { cpuMs: input.timeoutMs },
        });
        const harness = worker.getEntrypoint() as unknown as HarnessEntrypoint;
        const answer = await Promise.race([
          harness.run({
            entry: input.entry,
            hasTests: input.tests !== undefined,
            maxOutputBytes: input.maxOutputBytes,
          }),
          deadline,
        ]);
        if (answer === "timeout")
          return failedResult(
            started,
            { name: "TimeoutError", message: `no answer within timeoutMs (${input.timeoutMs} ms)` },
            true,
          );
        return { ...answer, timedOut: false, durationMs: Date.now() - started };
      } catch (error) {
        // The runtime's own failure (a syntax error at load, the CPU limit, an isolate out of memory).
        // CPU time never exceeds wall time, so a failure at or past the budget is the limit.
        return failedResult(started, describe(error), Date.now() - started >= input.timeoutMs);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
