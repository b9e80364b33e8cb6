import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/**
 * Node-side tests: pure logic, the vLLM simulator, and end-to-end runs against local stacks (on
 * Miniflare's API, except where a test is about `wrangler dev` too: cli-dev, caller-gone, soak; and
 * cli-stack, see its beforeAll).
 * Two projects: unit files run on at least 2 workers (vitest's default of cores − 1 is one worker
 * on a 2-core CI machine, and most unit time is module import, not CPU contention); e2e files run
 * one at a time after them, because each starts its own stack and several of them time a reload
 * or a shutdown. .ci/run runs two such processes side by side on fixed halves of the e2e files
 * (lanes; vitest's own 2 workers pick the pairs by file size, issue 27).
 * `--project unit` / `--project e2e` runs one of them. Unit files start their simulators with the
 * toy tokenizer (VLLM_SIM_TOKENIZER=toy): Qwen3's costs about a second to build in every file's
 * process, and the files that test Qwen3's tokenization ask for it by name. The e2e stacks and
 * the integration suite's shared simulators serve Qwen3's (the default).
 */
export default defineConfig({
  test: {
    environment: "node",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          env: { VLLM_SIM_TOKENIZER: "toy" },
          maxWorkers: Math.max(2, availableParallelism() - 1),
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
