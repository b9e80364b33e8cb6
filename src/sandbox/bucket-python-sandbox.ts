/**
 * @module `language: "python"` on the Worker's own LOADER binding (production): Pyodide's files
 * and the booted interpreter's memory snapshot come from R2 (src/sandbox/pyodide-objects.ts),
 * read once per isolate and kept there.
 *
 * Why R2 and not the bundle: the runtime is 12 MB (about 4 MB of the 10 MB compressed Worker
 * limit) and the snapshot 30 MB, over what a bundle may hold. The first Python call of an isolate
 * reads the five files (concurrent first calls share that read), then the snapshot beside them;
 * when there is none (or it is not a snapshot), it makes one in an isolate of its own, as the
 * local sandbox host does, and writes it back, so the next isolate only reads it. Two isolates
 * making it at once write the same bytes; the last write wins. Missing files are a result that
 * says how to upload them, not a thrown error: the rollout goes on.
 */
import type { RunCodeError, RunCodeInput, RunCodeResult } from "../schemas/run-code";
import {
  PYODIDE_FILE_NAMES,
  PYODIDE_PREFIX,
  PYODIDE_UPLOAD_COMMAND,
  isPyodideSnapshot,
  pyodideSnapshotKey,
} from "./pyodide-objects";
import { type PythonRuntimeFiles, type PythonSandbox, createPythonSandbox } from "./python-sandbox";
import type { LoaderBinding } from "./worker-loader";

/** The slice of an R2 bucket binding this reads and writes. */
export interface PyodideBucket {
  get(key: string): Promise<{ arrayBuffer(): Promise<ArrayBuffer> } | null>;
  put(key: string, value: ArrayBuffer): Promise<unknown>;
}

/** What the isolate holds once the first call is through: the sandbox, or the keys that were missing. */
type Runtime = { sandbox: PythonSandbox } | { missing: string[] };

/** The Python half of a LOADER sandbox, with Pyodide read from `bucket`. */
export type BucketPythonSandbox = Pick<PythonSandbox, "run">;

/** Reads the five files; the keys of any that are absent instead. */
async function readFiles(
  bucket: PyodideBucket,
): Promise<PythonRuntimeFiles | { missing: string[] }> {
  const fields = Object.keys(PYODIDE_FILE_NAMES) as Array<keyof typeof PYODIDE_FILE_NAMES>;
  const bodies = await Promise.all(
    fields.map(async (field) =>
      (await bucket.get(PYODIDE_PREFIX + PYODIDE_FILE_NAMES[field]))?.arrayBuffer(),
    ),
  );
  const missing = fields
    .filter((_, index) => bodies[index] === undefined)
    .map((field) => PYODIDE_PREFIX + PYODIDE_FILE_NAMES[field]);
  if (missing.length > 0) return { missing };
  const [mjs, asmMjs, wasm, stdlib, lock] = bodies as ArrayBuffer[];
  const text = (bytes: ArrayBuffer) => new TextDecoder().decode(bytes);
  return {
    mjs: text(mjs!),
    asmMjs: text(asmMjs!),
    wasm: wasm!,
    stdlib: stdlib!,
    lock: text(lock!),
  };
}

/** The error a Python call answers while the files are not in the bucket. */
function missingError(missing: string[]): RunCodeError {
  return {
    name: "PythonRuntimeMissing",
    message: `the Python runtime is not in the TRAJECTORIES bucket (missing ${missing.join(", ")}); upload it once with \`${PYODIDE_UPLOAD_COMMAND}\` (docs/production.md, "Python in code environments")`,
  };
}

/**
 * A Python sandbox on `loader` whose Pyodide files and snapshot are in `bucket` under
 * PYODIDE_PREFIX. Keep one per isolate: it holds the files (about 13.5 MB) and the snapshot
 * (about 31.5 MB) after the first call, and later calls read nothing from R2.
 */
export function createBucketPythonSandbox(
  loader: LoaderBinding,
  bucket: PyodideBucket,
  compatibilityDate: string,
): BucketPythonSandbox {
  let runtime: Promise<Runtime> | undefined;

  async function start(): Promise<Runtime> {
    const files = await readFiles(bucket);
    if ("missing" in files) return files;
    const sandbox = createPythonSandbox(loader, files, compatibilityDate);
    const key = await pyodideSnapshotKey(compatibilityDate);
    const stored = await (await bucket.get(key))?.arrayBuffer();
    if (stored !== undefined && isPyodideSnapshot(stored)) {
      sandbox.install(stored);
    } else {
      const made = await sandbox.snapshot();
      // A failed write costs the next isolate a make of its own, never this call.
      await bucket
        .put(key, made)
        .catch((error: unknown) =>
          console.warn(
            `python sandbox: could not store the snapshot at ${key}: ${(error as Error)?.message}`,
          ),
        );
    }
    return { sandbox };
  }

  return {
    async run(
      input: RunCodeInput,
      failed: (started: number, error: RunCodeError, timedOut: boolean) => RunCodeResult,
    ): Promise<RunCodeResult> {
      const started = Date.now();
      runtime ??= start();
      let ready: Runtime;
      try {
        ready = await runtime;
      } catch (error) {
        runtime = undefined; // an R2 or boot failure: the next call tries again
        throw error;
      }
      if ("missing" in ready) {
        runtime = undefined; // uploaded later, the next call finds them
        return failed(started, missingError(ready.missing), false);
      }
      // durationMs from this call's start: the first call of an isolate includes reading R2 (and making the snapshot).
      return { ...(await ready.sandbox.run(input, failed)), durationMs: Date.now() - started };
    },
  };
}
