/**
 * @module Where Pyodide's files and its memory snapshot live in R2 for the Worker's own LOADER
 * path (`language: "python"` in production), and what a stored snapshot must look like before it
 * is installed. Shared by the Worker (src/sandbox/bucket-python-sandbox.ts) and the upload script
 * (scripts/upload-pyodide.ts), so both name the same keys.
 */
import { PYTHON_HARNESS_SOURCE, PYTHON_SETUP_SOURCE } from "./python-harness";

/**
 * The Pyodide release the harness is written for: the `pyodide` dependency's version
 * (test/unit/sandbox/pyodide-objects.test.ts fails when package.json moves without it).
 */
export const PYODIDE_VERSION = "314.0.8";

/** The key prefix of this release's objects in the TRAJECTORIES bucket; versioned, so an upgrade never reads older files. */
export const PYODIDE_PREFIX = `sandbox/pyodide/${PYODIDE_VERSION}/`;

/** Pyodide's files by their PythonRuntimeFiles field: the name in node_modules/pyodide, which is also the key under PYODIDE_PREFIX. */
export const PYODIDE_FILE_NAMES = {
  mjs: "pyodide.mjs",
  asmMjs: "pyodide.asm.mjs",
  wasm: "pyodide.asm.wasm",
  stdlib: "python_stdlib.zip",
  lock: "pyodide-lock.json",
} as const;

/** The command that uploads the files (docs/production.md, "Python in code environments"). */
export const PYODIDE_UPLOAD_COMMAND = "npx tsx scripts/upload-pyodide.ts --remote";

/**
 * The snapshot's key: beside the files, named by a digest of what the booted heap depends on
 * besides Pyodide itself (the harness that boots it and the sandbox's compatibility date), so a
 * changed harness makes a new snapshot instead of restoring an old heap into new code.
 */
export async function pyodideSnapshotKey(compatibilityDate: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(
      `${PYTHON_SETUP_SOURCE}\0${PYTHON_HARNESS_SOURCE}\0${compatibilityDate}`,
    ),
  );
  const hex = [...new Uint8Array(digest).slice(0, 8)]
    .map((byte) => byte.toString(16).padStart(2, "0"))
    .join("");
  return `${PYODIDE_PREFIX}snapshot-${hex}.bin`;
}

/** Pyodide's snapshot magic (`makeSnapshot` in pyodide.asm.mjs writes it as the first little-endian uint32). */
const SNAPSHOT_MAGIC = 1886286592;
/** Its header: magic, heap offset, JSON length, 0, then the 32-byte build id. */
const SNAPSHOT_HEADER_BYTES = 48;
/** Smaller than any booted interpreter's heap (31,457,408 bytes measured): a stub or a truncated object. */
const SNAPSHOT_MIN_BYTES = 1 << 20;

/**
 * Whether `bytes` has the shape of a Pyodide memory snapshot: the magic, a header whose JSON and
 * heap offsets fall inside the object, and a heap of plausible size. Checked before `install`, so
 * a stray or truncated object is made again instead of failing every boot.
 */
export function isPyodideSnapshot(bytes: ArrayBuffer): boolean {
  if (bytes.byteLength < SNAPSHOT_MIN_BYTES) return false;
  const header = new DataView(bytes, 0, SNAPSHOT_HEADER_BYTES);
  const heapOffset = header.getUint32(4, true);
  const jsonBytes = header.getUint32(8, true);
  return (
    header.getUint32(0, true) === SNAPSHOT_MAGIC &&
    heapOffset >= SNAPSHOT_HEADER_BYTES + jsonBytes &&
    heapOffset % 16 === 0 &&
    bytes.byteLength - heapOffset >= SNAPSHOT_MIN_BYTES
  );
}
