import { defineConfig } from "vitest/config";

/** Node-side tests: pure logic, the vLLM simulator, and end-to-end runs that spawn `wrangler dev`. */
export default defineConfig({
  test: {
    environment: "node",
    include: ["test/unit/**/*.test.ts", "test/e2e/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
