/**
 * @module The js-coder environment: the agent's code runs against the task's unit tests in a fresh
 * sandboxed isolate (`runCode`); the reward is the fraction of tests that pass, and the failures
 * are the next observation until all pass or the steps run out.
 */
import type { JsonObject, JsonValue } from "../../schemas/json";
import type { RunCodeResult } from "../../schemas/run-code";
import type { EnvStepResult } from "../../sdk/base-env";
import { runCode } from "../../sdk/run-code";
import { ProblemEnv } from "../problem-env";
import { lastCodeBlock } from "./code-block";

/** Wall-clock budget of one test run (a non-terminating answer costs this much, then is a failure). */
export const JS_CODER_TIMEOUT_MS = 1_000;

/** Attempts per task unless the task's `extra_args.max_attempts` (1..10) says otherwise: the episode ends after them. */
export const JS_CODER_MAX_ATTEMPTS = 2;

/** Passed tests over all tests; 0 when the module did not load or timed out. */
export function passedFraction(run: RunCodeResult): number {
  if (run.tests.length === 0) return run.ok ? 1 : 0;
  return run.tests.filter((one) => one.passed).length / run.tests.length;
}

/** What the agent reads after a run that did not pass every test. */
export function failureReport(run: RunCodeResult): string {
  if (run.timedOut)
    return `Your code did not finish within ${JS_CODER_TIMEOUT_MS} ms (an infinite loop?). Fix it and answer with the whole function in one \`\`\`js block.`;
  if (run.error)
    return `Loading your code failed: ${run.error.name}: ${run.error.message}\nFix it and answer with the whole function in one \`\`\`js block.`;
  const failed = run.tests.filter((one) => !one.passed);
  const lines = failed.slice(0, 10).map((one) => `- ${one.name}: ${one.message}`);
  return `${failed.length} of ${run.tests.length} tests failed:\n${lines.join("\n")}\nFix the function and answer with the whole function in one \`\`\`js block.`;
}

/**
 * One task, up to `max_attempts` attempts (the rollout's max_steps may stop it sooner). Each step's reward is that attempt's fraction of passing tests (the
 * js-coder agent's trajectory reward is the last step's). The state after a step is its snapshot,
 * so resuming a rollout never runs its earlier attempts again.
 */
export class JsCoderEnv extends ProblemEnv {
  #attempts = 0;

  get #maxAttempts(): number {
    const asked = (this.task.extra_args as { max_attempts?: unknown } | undefined)?.max_attempts;
    return typeof asked === "number" && Number.isInteger(asked) && asked >= 1 && asked <= 10
      ? asked
      : JS_CODER_MAX_ATTEMPTS;
  }

  async step(action: JsonValue): Promise<EnvStepResult> {
    this.#attempts++;
    const code = lastCodeBlock(typeof action === "string" ? action : "");
    const last = this.#attempts >= this.#maxAttempts;
    if (code === null)
      return [
        "Answer with the function in one ```js code block.",
        0,
        last,
        { attempts: this.#attempts, passed: 0, total: 0 },
      ];
    const run = await runCode({
      language: "javascript",
      code,
      tests: String(this.task.ground_truth ?? ""),
      timeoutMs: JS_CODER_TIMEOUT_MS,
      maxOutputBytes: 16_384,
    });
    const fraction = passedFraction(run);
    const info: JsonObject = {
      attempts: this.#attempts,
      passed: run.tests.filter((one) => one.passed).length,
      total: run.tests.length,
      timed_out: run.timedOut,
      sandbox_ms: run.durationMs,
    };
    if (fraction === 1) return ["", 1, true, info];
    return [last ? "" : failureReport(run), fraction, last, info];
  }

  override snapshot(): JsonValue {
    return { attempts: this.#attempts };
  }

  override restore(snapshot: JsonValue): void {
    const attempts = (snapshot as { attempts?: unknown } | null)?.attempts;
    this.#attempts = typeof attempts === "number" ? attempts : 0;
  }
}
