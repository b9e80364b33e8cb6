import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/**
 * Node-side tests: pure logic, the vLLM simulator, and end-to-end runs that spawn `wrangler dev`.
 * Two projects: unit files run on at least 2 workers (vitest's default of cores − 1 is one worker
 * on a 2-core CI machine, and most unit time is module import, not CPU contention); e2e files run
 * after them, 2 at a time: each starts its own stack on free ports and mostly waits on the
 * processes it starts (one at a time was about 380 s of CI's time, issue 27). Their bounds are
 * relative to configured timeouts, not to an idle machine. `--project unit` / `--project e2e`
 * runs one of them.
 */
export default defineConfig({
  test: {
    environment: "node",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      { extends: true, test: { name: "unit", include: ["test/unit/**/*.test.ts"], maxWorkers: Math.max(2, availableParallelism() - 1), sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: "e2e", include: ["test/e2e/**/*.test.ts"], maxWorkers: 2, sequence: { groupOrder: 1 } } },
    ],
  },
});
