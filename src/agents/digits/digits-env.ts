/**
 * @module The learning demo's task (bench:learn, docs/learning.md): copy a digit. The ground
 * truth is the digits to copy, one per turn (`"7"`, or `"73"` for two turns); the first prompt is
 * the task's problem ("Copy the digit 7."), each later turn's is "Copy the digit d." for the
 * next digit. A turn earns 1/turns when the reply is exactly that digit, so a rollout scores
 * between 0 and 1 and a policy that copies every digit scores 1.
 */
import type { AgentTask } from "../../schemas/agent-task";
import type { JsonValue } from "../../schemas/json";
import type { EnvReset, EnvStepResult } from "../../sdk/base-env";
import { ProblemEnv } from "../problem-env";

/** The prompt of one turn: what a dataset row's problem must say for its first digit. */
export function copyPrompt(digit: string): string {
  return `Copy the digit ${digit}.`;
}

/** Copy the task's digits, one per turn; deterministic, so a replay rebuilds it. */
export class DigitsEnv extends ProblemEnv {
  readonly #digits: string[];
  #turn = 0;

  constructor(task: AgentTask) {
    super(task);
    const truth = String(task.ground_truth ?? "");
    this.#digits = /^\d+$/.test(truth) ? [...truth] : [];
  }

  override reset(): EnvReset {
    this.#turn = 0;
    return [this.task.problem, { turns: this.#digits.length }];
  }

  step(action: JsonValue): EnvStepResult {
    const expected = this.#digits[this.#turn];
    const correct =
      typeof action === "string" && expected !== undefined && action.trim() === expected;
    this.#turn += 1;
    const done = this.#turn >= this.#digits.length;
    const next = done ? "" : copyPrompt(this.#digits[this.#turn]!);
    return [next, correct ? 1 / Math.max(1, this.#digits.length) : 0, done, { correct }];
  }
}
