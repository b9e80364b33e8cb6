import { readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { availableParallelism } from "node:os";
import { join, posix } from "node:path";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import type { Plugin } from "vite";
import { configDefaults, defineConfig } from "vitest/config";

/**
 * Vite's logger without one warning: @openai/agents (a devDependency, for the framework examples)
 * ships sourcemaps that name source files it does not ship, so loading it into workerd printed
 * about 190 "Sourcemap for … points to missing source files" lines per run. Stack traces still map
 * to the dist files; every other warning passes through.
 */
function quietSourcemapWarnings(): Plugin {
  // A plugin, because vitest replaces any customLogger with its own; this wraps that one.
  return {
    name: "edge-rollout:quiet-sourcemap-warnings",
    configResolved(config) {
      const warnOnce = config.logger.warnOnce.bind(config.logger);
      config.logger.warnOnce = (message, options) => {
        if (/^Sourcemap for ".*\/node_modules\/.*" points to missing source files/.test(message))
          return;
        warnOnce(message, options);
      };
    },
  };
}

/** The packages the Worker, the examples and the tests import inside workerd (entry points as imported). */
const PREBUNDLED = [
  "zod",
  "hono",
  "hono/html",
  "hono/cookie",
  "hono/utils/html",
  "hono/utils/http-status",
  "openai",
  "hyparquet",
  "hyparquet-writer",
  "sucrase",
  "@openai/agents",
  "ai",
  "@ai-sdk/openai-compatible",
];

/** Where the group files are (test/integration/groups/README.md says why and how to add a file). */
const GROUPS_DIR = "test/integration/groups";

/**
 * The test files a group file runs (`describe(…, () => import("../runtime/feed/x.….test"))`, in
 * any subfolder), as paths from the repository root, each import resolved from the groups folder.
 * In grouped mode these do not run on their own as well.
 */
function groupedFiles(): string[] {
  return readdirSync(GROUPS_DIR)
    .filter((name) => name.endsWith(".test.ts"))
    .flatMap((name) =>
      [...readFileSync(join(GROUPS_DIR, name), "utf8").matchAll(/import\("(\.\.?\/[^"]+)"\)/g)].map(
        (match) => posix.join(GROUPS_DIR, `${match[1]}.ts`),
      ),
    );
}

/**
 * Grouped mode (INTEGRATION_GROUPS=1, as .ci/run and `npm run test:integration` run it): each group
 * file runs its files one after another in one workerd, and every file no group names runs on its
 * own. Otherwise (the default, and how to run one file) every file runs on its own and the group
 * files are left out.
 */
const grouped = process.env.INTEGRATION_GROUPS === "1";

/**
 * Integration tests inside workerd: the real Worker (functions/worker.ts) with its Durable
 * Objects, queues and R2 from wrangler.toml, talking to a vLLM simulator on loopback that
 * test/global-setup.ts starts.
 */
export default defineConfig({
  plugins: [
    quietSourcemapWarnings(),
    cloudflareTest(({ inject }) => ({
      main: "./functions/worker.ts",
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        // LOCAL_DEV: tests reach the Worker at made-up hosts (http://w), not loopback; they run without secrets.
        bindings: {
          LLM_BASE_URL: `${inject("simulatorUrl")}/v1`,
          SIMULATOR_URL: inject("simulatorUrl"),
          SANDBOX_URL: inject("sandboxUrl"),
          LOCAL_DEV: "true",
          DRIVER_INTERRUPTIBLE_CALLS: "on",
        },
      },
    })),
  ],
  test: {
    include: ["test/integration/**/*.test.ts"],
    exclude: [...configDefaults.exclude, ...(grouped ? groupedFiles() : [`${GROUPS_DIR}/**`])],
    // At least 2 workers (vitest's default, cores − 1, is one on a 2-core CI machine): loading a
    // file's modules into workerd waits on round trips to vitest more than it computes, which a
    // second worker overlaps. Files (and groups) do not share storage, and no test reconfigures
    // the shared simulators, so they may run side by side.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    globalSetup: ["./test/global-setup.ts"],
    testTimeout: 30_000,
    // Each test file (or group) runs in a fresh workerd that imports the Worker's module graph one
    // module per round trip to vitest; the dependencies were ~370 of its ~630 modules (openai 154,
    // zod 95, sucrase 57, hono 29, hyparquet 27). Pre-bundled, each package is one module (issue
    // 27). Builtins stay imports: workerd provides them (nodejs_compat).
    deps: {
      optimizer: {
        ssr: {
          enabled: true,
          include: PREBUNDLED,
          rolldownOptions: { external: [/^node:/, /^cloudflare:/, ...builtinModules] },
        },
      },
    },
  },
});
