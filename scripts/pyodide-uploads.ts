/** @module What scripts/upload-pyodide.ts puts in R2: each of node_modules/pyodide's files the Worker reads, and the `wrangler` command that puts it. */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import {
  PYODIDE_FILE_NAMES,
  PYODIDE_PREFIX,
  PYODIDE_VERSION,
} from "../src/sandbox/pyodide-objects";

/** One object to upload: its key in the bucket and the file it comes from. */
export interface PyodideUpload {
  key: string;
  file: string;
}

/** Where the installed `pyodide` package is. */
export function pyodideDir(): string {
  return dirname(createRequire(import.meta.url).resolve("pyodide/package.json"));
}

/**
 * The five objects, from the installed package. Throws when that package is not the version the
 * harness is written for (PYODIDE_VERSION), so no other build lands under this version's keys.
 */
export function pyodideUploads(dir = pyodideDir()): PyodideUpload[] {
  const installed = (
    JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string }
  ).version;
  if (installed !== PYODIDE_VERSION)
    throw new Error(
      `node_modules/pyodide is ${installed}, the sandbox expects ${PYODIDE_VERSION} (src/sandbox/pyodide-objects.ts)`,
    );
  return Object.values(PYODIDE_FILE_NAMES).map((name) => ({
    key: PYODIDE_PREFIX + name,
    file: join(dir, name),
  }));
}

/** Where the object goes: Cloudflare's R2 (`remote`) or a local state dir in wrangler's layout. */
export type UploadTarget = { remote: true } | { remote: false; persistTo: string };

/** `npx wrangler r2 object put …` for one upload into `bucket`. */
export function wranglerPutArgs(
  bucket: string,
  upload: PyodideUpload,
  target: UploadTarget,
): string[] {
  const where = target.remote ? ["--remote"] : ["--local", "--persist-to", target.persistTo];
  return [
    "wrangler",
    "r2",
    "object",
    "put",
    `${bucket}/${upload.key}`,
    "--file",
    upload.file,
    ...where,
  ];
}
