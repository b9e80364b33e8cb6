/** Unit: the R2 layout of Pyodide for the LOADER path, the upload script's plan, and the snapshot check. */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { pyodideDir, pyodideUploads, wranglerPutArgs } from "../../../scripts/pyodide-uploads";
import {
  PYODIDE_PREFIX,
  PYODIDE_VERSION,
  isPyodideSnapshot,
  pyodideSnapshotKey,
} from "../../../src/sandbox/pyodide-objects";

/** A buffer shaped like Pyodide's snapshot header: magic, heap offset, JSON length. */
function snapshotLike({
  bytes = 2 << 20,
  magic = 1886286592,
  heapOffset = 1024,
  jsonBytes = 900,
} = {}): ArrayBuffer {
  const buffer = new ArrayBuffer(bytes);
  const view = new DataView(buffer);
  view.setUint32(0, magic, true);
  view.setUint32(4, heapOffset, true);
  view.setUint32(8, jsonBytes, true);
  return buffer;
}

describe("Pyodide in R2", () => {
  it("is versioned by the installed pyodide package, and uploads its five files under that version", () => {
    const installed = JSON.parse(readFileSync(join(pyodideDir(), "package.json"), "utf8")) as {
      version: string;
    };
    expect(PYODIDE_VERSION).toBe(installed.version);
    const uploads = pyodideUploads();
    expect(uploads.map((upload) => upload.key)).toEqual(
      [
        "pyodide.mjs",
        "pyodide.asm.mjs",
        "pyodide.asm.wasm",
        "python_stdlib.zip",
        "pyodide-lock.json",
      ].map((name) => `sandbox/pyodide/${PYODIDE_VERSION}/${name}`),
    );
    for (const upload of uploads) expect(existsSync(upload.file), upload.file).toBe(true);
  });

  it("puts each file with wrangler into the deployed bucket or a local state dir", () => {
    const [first] = pyodideUploads();
    expect(wranglerPutArgs("bucket", first!, { remote: true })).toEqual([
      "wrangler",
      "r2",
      "object",
      "put",
      `bucket/${PYODIDE_PREFIX}pyodide.mjs`,
      "--file",
      first!.file,
      "--remote",
    ]);
    expect(wranglerPutArgs("bucket", first!, { remote: false, persistTo: "s" }).slice(-3)).toEqual([
      "--local",
      "--persist-to",
      "s",
    ]);
  });

  it("names the snapshot by what the booted heap depends on", async () => {
    const key = await pyodideSnapshotKey("2026-04-20");
    expect(key).toMatch(
      new RegExp(`^${PYODIDE_PREFIX.replaceAll(".", "\\.")}snapshot-[0-9a-f]{16}\\.bin$`),
    );
    expect(await pyodideSnapshotKey("2026-04-21")).not.toBe(key);
  });

  it("installs only objects shaped like a snapshot", () => {
    expect(isPyodideSnapshot(snapshotLike())).toBe(true);
    expect(isPyodideSnapshot(snapshotLike({ magic: 1 }))).toBe(false);
    expect(isPyodideSnapshot(snapshotLike({ bytes: 4096 }))).toBe(false);
    expect(isPyodideSnapshot(snapshotLike({ jsonBytes: 2000 }))).toBe(false);
    expect(isPyodideSnapshot(snapshotLike({ heapOffset: 1030 }))).toBe(false);
    expect(isPyodideSnapshot(snapshotLike({ heapOffset: 2 << 20 }))).toBe(false);
  });
});
