/**
 * @module The Miniflare options `wrangler.toml` declares, as wrangler itself derives them
 * (`unstable_getMiniflareWorkerOptions`), kept on disk per config. Importing wrangler costs about
 * 3.5 s of CPU (measured at load 7 on the 2-core CI machine) and every Miniflare stack start did
 * it, for a 2 KB answer that changes only with the config (issue 27: CI starts about twenty
 * stacks). The answer is kept in `.tmp/bundles/worker-options-<digest>.json`, the digest taken
 * over wrangler's version, the config's bytes and the env files wrangler reads beside it; anything it holds that JSON cannot carry other than Miniflare's own-Worker marker makes it
 * uncached (asked of wrangler every time, as before).
 */
import { createHash } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { kCurrentWorker, type WorkerOptions } from "miniflare";
import { BUNDLE_CACHE_DIR } from "./bundle-cache.mjs";
import { withoutAddedSignalHandlers } from "./library-signal-handlers";

/** How Miniflare's own-Worker symbol (a service binding to the Worker itself) is written in JSON. */
const CURRENT_WORKER = { $miniflare: "kCurrentWorker" };
const WRANGLER_VERSION = (
  createRequire(import.meta.url)("wrangler/package.json") as { version: string }
).version;

/**
 * The digest of everything wrangler's answer depends on. Not the config's path (each stack writes
 * its config into its own state dir): an answer that names its directory is kept under a key
 * that includes the path (see `wranglerWorkerOptions`).
 */
function keyOf(configPath: string, withPath: boolean): string {
  const hash = createHash("sha256")
    .update(`${WRANGLER_VERSION}\n${withPath ? configPath : ""}\n`)
    .update(readFileSync(configPath));
  const dir = dirname(configPath);
  // `.dev.vars` and `.env` files beside the config add bindings in wrangler's local modes.
  for (const name of readdirSync(dir)
    .filter((entry) => entry.startsWith(".dev.vars") || entry.startsWith(".env"))
    .sort())
    hash.update(`\n${name}\n`).update(readFileSync(join(dir, name)));
  return hash.digest("base64url").slice(0, 24);
}

/** JSON of `options`, or undefined when it holds something JSON would lose. */
function serialize(options: WorkerOptions): string | undefined {
  let lossy = false;
  const text = JSON.stringify(options, (_key, value: unknown) => {
    if (value === kCurrentWorker) return CURRENT_WORKER;
    if (typeof value === "function" || typeof value === "symbol" || typeof value === "bigint")
      lossy = true;
    return value;
  });
  return lossy ? undefined : text;
}

function revive(text: string): WorkerOptions {
  return JSON.parse(text, (_key, value: unknown) =>
    value !== null &&
    typeof value === "object" &&
    (value as { $miniflare?: unknown }).$miniflare === CURRENT_WORKER.$miniflare
      ? kCurrentWorker
      : value,
  ) as WorkerOptions;
}

/** The Worker options of the wrangler config at `configPath`, from disk when that config was read before. */
export async function wranglerWorkerOptions(configPath: string): Promise<WorkerOptions> {
  const path = join(BUNDLE_CACHE_DIR, `worker-options-${keyOf(configPath, false)}.json`);
  for (const candidate of [
    path,
    join(BUNDLE_CACHE_DIR, `worker-options-${keyOf(configPath, true)}.json`),
  ]) {
    if (!existsSync(candidate)) continue;
    try {
      return revive(readFileSync(candidate, "utf8"));
    } catch {
      // unreadable: ask wrangler again
    }
  }
  // Loaded here, with the signal handlers it installs removed: Ctrl-C belongs to the stack's owner.
  const { unstable_getMiniflareWorkerOptions } = await withoutAddedSignalHandlers(
    () => import("wrangler"),
  );
  const { workerOptions } = unstable_getMiniflareWorkerOptions(configPath);
  const text = serialize(workerOptions as WorkerOptions);
  // An answer naming the config's directory (a path wrangler resolved) is only good for that directory.
  const kept =
    text !== undefined && text.includes(dirname(configPath))
      ? join(BUNDLE_CACHE_DIR, `worker-options-${keyOf(configPath, true)}.json`)
      : path;
  if (text !== undefined && !existsSync(kept)) {
    mkdirSync(BUNDLE_CACHE_DIR, { recursive: true });
    const partial = `${kept}.${process.pid}`;
    writeFileSync(partial, text);
    renameSync(partial, kept);
  }
  return workerOptions as WorkerOptions;
}
