import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/**
 * Node-side tests: pure logic, the vLLM simulator, and end-to-end runs that spawn `wrangler dev`.
 * Two projects: unit files run on at least 2 workers (vitest's default of cores − 1 is one worker
 * on a 2-core CI machine, and most unit time is module import, not CPU contention); e2e files run
 * one at a time after them, because each starts its own stack and several of them time a reload
 * or a shutdown (2 at a time, batch-to-feed.e2e timed out at 180 s under load, issue 27).
 * `--project unit` / `--project e2e` runs one of them.
 */
export default defineConfig({
  test: {
    environment: "node",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      { extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"], maxWorkers: Math.max(2, availableParallelism() - 1), sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: "e2e", include: ["test/e2e/**/*.test.ts"], maxWorkers: 1, sequence: { groupOrder: 1 } } },
    ],
  },
});
