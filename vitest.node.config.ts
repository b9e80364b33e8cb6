import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/**
 * Node-side tests: pure logic, the vLLM simulator, and end-to-end runs that spawn `wrangler dev`.
 * Two projects: unit files run on at least 2 workers (vitest's default of cores − 1 is one worker
 * on a 2-core CI machine, and most unit time is module import, not CPU contention); e2e files run
 * one at a time after them, because each starts its own stack and several of them time a reload
 * or a shutdown. .ci/run runs two such processes side by side on fixed halves of the e2e files
 * (lanes; vitest's own 2 workers pick the pairs by file size, issue 27).
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
