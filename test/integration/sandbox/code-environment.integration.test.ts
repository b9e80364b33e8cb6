/**
 * Integration: code environments inside the Worker. The LOADER binding's isolates (terminating
 * snippets only: in this workerd a busy loop would wedge every test) and js-coder rollouts, whose
 * snippets the Worker sends to the supervised sandbox host (SANDBOX_URL, test/global-setup.ts).
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createLoaderSandbox } from "../../../src/sandbox/loader-sandbox";
import type { RolloutView } from "../../../src/schemas/rollout-api";
import { parseRunCodeRequest } from "../../../src/sdk/run-code";
import { CODING_TASKS, codingPrompt, codingTests } from "../../../tools/simulator/coding-tasks";
import { runRollout, uniqueId } from "../../fixtures/rollouts";

const loader = createLoaderSandbox(env.LOADER);
const run = (code: string, entry = "f") =>
  loader.run(parseRunCodeRequest({ language: "javascript", code, entry, timeoutMs: 5000 }));

describe("a LOADER isolate", () => {
  it("cannot reach the network: not the model server, not the Worker's own gateway", async () => {
    for (const url of [`${env.SIMULATOR_URL}/v1/models`, "http://w/v1/gateway/any/v1/models"]) {
      const result = await run(
        `export const f = async () => (await fetch(${JSON.stringify(url)})).status;`,
      );
      expect(result.ok).toBe(false);
      expect(result.error?.message).toContain("not permitted to access the internet");
    }
  });

  it("sees none of the parent's bindings, variables or globals (so no rollout key or secret)", async () => {
    (globalThis as Record<string, unknown>).__ROLLOUT_KEY = "secret-key";
    const result = await run(
      "export const f = (...a) => [typeof globalThis.__ROLLOUT_KEY, typeof env, typeof ROLLOUT_SESSION, typeof LLM_BASE_URL, typeof process, a.length];",
    );
    expect(result).toMatchObject({
      ok: true,
      result: ["undefined", "undefined", "undefined", "undefined", "undefined", 0],
    });
    delete (globalThis as Record<string, unknown>).__ROLLOUT_KEY;
  });

  it("starts fresh on every call: state a snippet leaves is gone on the next", async () => {
    const first = await run(
      "globalThis.count = (globalThis.count ?? 0) + 1; export const f = () => globalThis.count;",
    );
    const second = await run(
      "globalThis.count = (globalThis.count ?? 0) + 1; export const f = () => globalThis.count;",
    );
    expect([first.result, second.result]).toEqual([1, 1]);
  });

  it("runs every js-coder reference solution green against its dataset tests", async () => {
    for (const task of CODING_TASKS) {
      const result = await loader.run(
        parseRunCodeRequest({
          language: "javascript",
          code: `${task.solution}\nexport { ${task.name} };`,
          tests: codingTests(task),
          timeoutMs: 5000,
        }),
      );
      expect(
        result.tests.every((one) => one.passed) && result.tests.length === task.cases.length,
        `${task.name}: ${JSON.stringify(result)}`,
      ).toBe(true);
    }
  });
});

describe("js-coder rollouts", () => {
  it("end with rewards that vary between tasks, failures fed back as observations", async () => {
    const views: RolloutView[] = await Promise.all(
      // Seeded: unseeded, the simulator samples by its request count, which the six concurrent
      // rollouts reach in any order, so now and then all six scored alike and the test failed.
      CODING_TASKS.slice(0, 6).map((task, i) =>
        runRollout(
          {
            agent: "js-coder",
            rollout_id: uniqueId("coder"),
            task: { problem: codingPrompt(task), ground_truth: codingTests(task) },
            config: { max_steps: 2, seed: 11 + i },
          },
          60_000,
        ),
      ),
    );
    for (const view of views) {
      expect(view.status).toBe("succeeded");
      expect(view.reward).toBeGreaterThanOrEqual(0);
      expect(view.reward).toBeLessThanOrEqual(1);
      expect(view.reward).toBe(view.trajectory.steps.at(-1)!.reward);
    }
    expect(new Set(views.map((view) => view.reward)).size).toBeGreaterThan(1);
    const retried = views.filter((view) => view.trajectory.steps.length === 2);
    for (const view of retried)
      expect(view.trajectory.steps[1]!.observation).toMatch(
        /tests failed|did not finish|Loading your code failed/,
      );
  });
});
