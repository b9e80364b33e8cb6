import { availableParallelism } from "node:os";
import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import type { Plugin } from "vite";
import { defineConfig } from "vitest/config";

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
        if (/^Sourcemap for ".*\/node_modules\/.*" points to missing source files/.test(message)) return;
        warnOnce(message, options);
      };
    },
  };
}

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
        bindings: { LLM_BASE_URL: `${inject("simulatorUrl")}/v1`, SIMULATOR_URL: inject("simulatorUrl"), SANDBOX_URL: inject("sandboxUrl"), LOCAL_DEV: "true", DRIVER_INTERRUPTIBLE_CALLS: "on" },
      },
    })),
  ],
  test: {
    include: ["test/integration/**/*.test.ts"],
    // At least 2 workers (vitest's default, cores − 1, is one on a 2-core CI machine): about a
    // third of this suite's time is each file importing the Worker's modules into workerd, which
    // a second worker overlaps. Files do not share storage, and no test reconfigures the shared
    // simulators, so files may run side by side.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    globalSetup: ["./test/global-setup.ts"],
    testTimeout: 30_000,
  },
});
