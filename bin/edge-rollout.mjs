#!/usr/bin/env node
// The `edge-rollout` command. The CLI is TypeScript with no build step: `npm ci` and it works.
// It runs from one esbuild bundle of tools/cli, kept in .tmp/bundles while its sources are unchanged
// (scripts/bundle-cache.mjs): a command then costs about 0.7 s of CPU instead of about 1.8 s through
// tsx's loader, which resolves and transforms each of its ~300 modules in turn (issue 27: CI runs
// about fifty commands). Where no bundle can be made (no esbuild, a read-only checkout) it runs
// through tsx as before. `dev` registers tsx itself: the stack's scripts are TypeScript.
import { fileURLToPath, pathToFileURL } from "node:url";

const MAIN = new URL("../tools/cli/main.ts", import.meta.url);

/**
 * esbuild plugin: each bundled file keeps its own `import.meta.url` (the CLI finds package.json
 * and scripts/ relative to its files), where a bundle would otherwise give them all the bundle's.
 */
const ownUrls = {
  name: "own-import-meta-url",
  setup(build) {
    build.onLoad({ filter: /\.ts$/ }, async (args) => {
      const { readFile } = await import("node:fs/promises");
      const source = await readFile(args.path, "utf8");
      return {
        contents: source.replaceAll(
          "import.meta.url",
          JSON.stringify(pathToFileURL(args.path).href),
        ),
        loader: "ts",
      };
    });
  },
};

async function loadMain() {
  try {
    const { cachedBundle } = await import("../scripts/bundle-cache.mjs");
    const path = await cachedBundle({
      entryPoints: [fileURLToPath(MAIN)],
      outfile: "edge-rollout-cli.mjs",
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      packages: "external",
      logLevel: "silent",
      plugins: [ownUrls],
    });
    globalThis[Symbol.for("edge-rollout.needs-typescript-loader")] = true;
    return (await import(pathToFileURL(path).href)).main;
  } catch {
    const { register } = await import("tsx/esm/api");
    register();
    return (await import(MAIN.href)).main;
  }
}

const main = await loadMain();
const code = await main(process.argv.slice(2));
// Exit now: an idle keep-alive socket or a finished child must not keep the process alive.
process.exit(code);
