import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

/**
 * Integration tests inside workerd: the real Worker (functions/worker.ts) with its Durable
 * Objects, queues and R2 from wrangler.toml, talking to a vLLM simulator on loopback that
 * test/global-setup.ts starts.
 */
export default defineConfig({
  plugins: [
    cloudflareTest(({ inject }) => ({
      main: "./functions/worker.ts",
      wrangler: { configPath: "./wrangler.toml" },
      miniflare: {
        bindings: { LLM_BASE_URL: `${inject("simulatorUrl")}/v1`, SIMULATOR_URL: inject("simulatorUrl") },
      },
    })),
  ],
  test: {
    include: ["test/integration/**/*.test.ts"],
    globalSetup: ["./test/global-setup.ts"],
    testTimeout: 30_000,
  },
});
