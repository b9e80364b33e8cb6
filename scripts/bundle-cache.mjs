/**
 * @module esbuild bundles reused across starts. Every local stack bundles the Worker (and the
 * sandbox host its own Worker), and every `edge-rollout` command its TypeScript; CI starts about
 * twenty stacks and runs about fifty commands (issue 27). A bundle is kept under
 * `.tmp/bundles/<key>/` with the list of files esbuild read for it, and served again only while
 * every one of those files has the same bytes; anything else builds afresh (and replaces it).
 * Plain JavaScript, so `bin/edge-rollout.mjs` can use it before any TypeScript loader exists.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "..");
/** Where bundles are kept (ignored by git, with the rest of `.tmp`). */
export const BUNDLE_CACHE_DIR = join(ROOT, ".tmp/bundles");
const ESBUILD_VERSION = createRequire(import.meta.url)("esbuild/package.json").version;

/** @param {string} path */
function digestOf(path) {
  try {
    return createHash("sha256").update(readFileSync(path)).digest("base64url");
  } catch {
    return undefined; // deleted since
  }
}

/** The options that decide a bundle's bytes, as a cache key (plugins by name: each caller's are fixed). */
function keyOf(options) {
  const { plugins, outfile, ...rest } = options;
  const described = JSON.stringify({
    esbuild: ESBUILD_VERSION,
    rest,
    plugins: plugins?.map((plugin) => plugin.name),
    name: basename(outfile),
  });
  return createHash("sha256").update(described).digest("base64url").slice(0, 20);
}

/** Whether every file the kept bundle in `dir` was built from still has the bytes it had. */
function stillFresh(dir, name) {
  if (!existsSync(join(dir, name))) return false;
  try {
    const { files } = JSON.parse(readFileSync(join(dir, "inputs.json"), "utf8"));
    return files.length > 0 && files.every(([path, digest]) => digestOf(path) === digest);
  } catch {
    return false;
  }
}

/**
 * Bundles with `options` (its `outfile` names the file; its directory is not used) unless a kept
 * bundle of the same options and inputs exists; resolves with the bundle's path (a `.map` beside
 * it when `sourcemap: "external"`). Concurrent callers (two CI lanes) may both build: each writes
 * a directory of its own and renames it into place, so a reader never sees half a bundle.
 */
export async function cachedBundle(options) {
  const name = basename(options.outfile);
  const dir = join(BUNDLE_CACHE_DIR, keyOf(options));
  if (stillFresh(dir, name)) return join(dir, name);
  const { build } = await import("esbuild");
  const building = `${dir}.building-${process.pid}-${Date.now()}`;
  mkdirSync(building, { recursive: true });
  try {
    const result = await build({ ...options, outfile: join(building, name), metafile: true });
    const cwd = options.absWorkingDir ?? process.cwd();
    const files = Object.keys(result.metafile.inputs)
      // esbuild names inputs relative to its working directory; plugin-made ones (a namespace prefix) are not files.
      .filter((input) => !/^[a-z-]+:/.test(input))
      .map((input) => [resolve(cwd, input), digestOf(resolve(cwd, input)) ?? ""]);
    writeFileSync(join(building, "inputs.json"), JSON.stringify({ files }));
    rmSync(dir, { recursive: true, force: true });
    try {
      renameSync(building, dir);
    } catch {
      // Another process put its own (equal) build there first: serve ours from where it is.
      return join(building, name);
    }
    return join(dir, name);
  } catch (error) {
    rmSync(building, { recursive: true, force: true });
    throw error;
  }
}
