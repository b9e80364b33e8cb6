/**
 * @module `language: "python"` on a Worker Loader binding: Pyodide (its npm package, no network)
 * in a fresh isolate per call, booted from a memory snapshot.
 *
 * Why a snapshot (bench/pyodide/pyodide-snapshot-probe.ts): a plain `loadPyodide` in a fresh isolate took
 * 2.2–2.6 s on an idle machine and 7–10 s on this loaded one, nearly all of it starting the
 * interpreter and importing its stdlib. A snapshot of the booted interpreter's memory (about 30 MB,
 * made once in its own isolate) restores in 0.4–1.8 s on the same loaded machine, and the Python
 * state is still fresh per call: each call is a new isolate, a new wasm instance and a new heap.
 * Sharing one isolate across calls (`LOADER.get(id)`) would save the wasm compile as well, but a
 * snippet reaches the isolate's JS globals through Pyodide's `js` module, so it could leave
 * something behind for the next call; it is not done.
 *
 * The boot and the call are two RPCs to the same isolate: workerd sometimes cancels a snapshot
 * boot as "hung" (2 of 6 boots in the probe, none once booted), and a boot is retried in a fresh
 * isolate before any snippet ran.
 */
import type { RunCodeError, RunCodeInput, RunCodeResult } from "../schemas/run-code";
import { PYTHON_HARNESS_SOURCE, PYTHON_SETUP_SOURCE } from "./python-harness";
import type { LoaderBinding, LoaderModule } from "./worker-loader";

/** Pyodide's files (from node_modules/pyodide), as the sandbox hands them to each isolate. */
export interface PythonRuntimeFiles {
  /** pyodide.mjs */
  mjs: string;
  /** pyodide.asm.mjs */
  asmMjs: string;
  /** pyodide.asm.wasm (9.6 MB), compiled by the loader as a module: Workers compile no wasm from bytes at run time. */
  wasm: ArrayBuffer;
  /** python_stdlib.zip (2.5 MB) */
  stdlib: ArrayBuffer;
  /** pyodide-lock.json */
  lock: string;
}

/**
 * Time a Python call may take beyond its `timeoutMs` to boot its isolate from the snapshot (0.4–1.8
 * s measured on a loaded 2-core machine); production's `limits.cpuMs` gets it too.
 */
export const PYTHON_BOOT_ALLOWANCE_MS = 5_000;

/** Boots tried per call before the call fails as the sandbox's fault. */
const BOOT_ATTEMPTS = 3;

/** What the Python harness answers (everything but the timing fields). */
type HarnessAnswer = Omit<RunCodeResult, "timedOut" | "durationMs">;

interface PythonHarness {
  boot(mode: "make" | "snapshot"): Promise<{ bootMs: number; snapshot?: Uint8Array }>;
  run(call: {
    code: string;
    tests: string | undefined;
    entry: string | undefined;
    maxOutputBytes: number;
  }): Promise<HarnessAnswer>;
}

/** Runs Python calls; its snapshot is made at the first call, or installed from elsewhere. */
export interface PythonSandbox {
  run(
    input: RunCodeInput,
    failed: (started: number, error: RunCodeError, timedOut: boolean) => RunCodeResult,
  ): Promise<RunCodeResult>;
  /** The snapshot's bytes (made now if there is none yet). */
  snapshot(): Promise<ArrayBuffer>;
  /** Uses `bytes` (made by another sandbox on the same Pyodide files) instead of making one. */
  install(bytes: ArrayBuffer): void;
  /** Whether a snapshot is made or being made. */
  hasSnapshot(): boolean;
}

/** A Python sandbox on `loader`, with Pyodide from `files`; `compatibilityDate` is the sandbox's. */
export function createPythonSandbox(
  loader: LoaderBinding,
  files: PythonRuntimeFiles,
  compatibilityDate: string,
): PythonSandbox {
  let snapshot: Promise<ArrayBuffer> | undefined;
  const load = (extra: Record<string, LoaderModule>, cpuMs: number): PythonHarness =>
    loader
      .load({
        compatibilityDate,
        mainModule: "python.js",
        modules: {
          "python.js": PYTHON_HARNESS_SOURCE,
          "setup.js": PYTHON_SETUP_SOURCE,
          "pyodide.mjs": { js: files.mjs },
          "pyodide.asm.mjs": { js: files.asmMjs },
          "pyodide.asm.wasm": { wasm: files.wasm },
          "python_stdlib.zip": { data: files.stdlib },
          "pyodide-lock.json": { text: files.lock },
          ...extra,
        },
        env: {},
        globalOutbound: null,
        limits: { cpuMs },
      })
      .getEntrypoint() as PythonHarness;

  async function make(): Promise<ArrayBuffer> {
    let last: unknown;
    for (let attempt = 0; attempt < BOOT_ATTEMPTS; attempt++) {
      try {
        const made = await load({}, 60_000).boot("make");
        // Copied (30 MB, briefly twice): keeping the RPC answer's own buffer aborted the whole
        // workerd ("tried to defer destruction during isolate shutdown") when the maker isolate
        // went away, 3 of 3 runs of test/integration/sandbox/python-loader.integration.test.ts.
        return new Uint8Array(made.snapshot!).buffer as ArrayBuffer;
      } catch (error) {
        last = error;
      }
    }
    throw new Error(`the Python runtime did not boot: ${(last as Error)?.message}`);
  }

  const sandbox: PythonSandbox = {
    snapshot() {
      snapshot ??= make().catch((error: unknown) => {
        snapshot = undefined;
        throw error;
      });
      return snapshot;
    },
    install(bytes) {
      snapshot = Promise.resolve(bytes);
    },
    hasSnapshot: () => snapshot !== undefined,
    async run(input, failed) {
      const started = Date.now();
      const bytes = await sandbox.snapshot();
      let harness: PythonHarness | undefined;
      let bootError: unknown;
      for (let attempt = 0; attempt < BOOT_ATTEMPTS && harness === undefined; attempt++) {
        // A boot that failed is tried again a moment later, not at once: the local workerd's
        // snapshot-boot flake (a fresh isolate reported as hung) came back three times in a row
        // when the tries followed each other within ~100 ms.
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 250 * attempt));
        const candidate = load(
          { "snapshot.bin": { data: bytes } },
          input.timeoutMs + PYTHON_BOOT_ALLOWANCE_MS,
        );
        try {
          await candidate.boot("snapshot");
          harness = candidate;
        } catch (error) {
          bootError = error;
        }
      }
      if (harness === undefined)
        throw new Error(
          `the Python sandbox did not boot in ${BOOT_ATTEMPTS} tries: ${(bootError as Error)?.message}`,
        );
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), input.timeoutMs);
      });
      const ran = Date.now();
      try {
        const call = {
          code: input.code,
          tests: input.tests,
          entry: input.entry,
          maxOutputBytes: input.maxOutputBytes,
        };
        const answer = await Promise.race([harness.run(call), deadline]);
        if (answer === "timeout")
          return failed(
            started,
            { name: "TimeoutError", message: `no answer within timeoutMs (${input.timeoutMs} ms)` },
            true,
          );
        return { ...answer, timedOut: false, durationMs: Date.now() - started };
      } catch (error) {
        const described =
          error instanceof Error
            ? { name: error.name, message: error.message }
            : { name: "Error", message: String(error) };
        return failed(started, described, Date.now() - ran >= input.timeoutMs);
      } finally {
        clearTimeout(timer);
      }
    },
  };
  return sandbox;
}
