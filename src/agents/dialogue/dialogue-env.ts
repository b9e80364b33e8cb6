/** @module A fixed-length multi-turn conversation: the user asks follow-ups for `turns` turns. */
import type { AgentTask } from "../../schemas/agent-task";
import type { JsonValue } from "../../schemas/json";
import type { EnvReset, EnvStepResult } from "../../sdk/base-env";
import { ProblemEnv } from "../problem-env";

/** Turns when the task does not say (`extra_args.turns`). */
export const DEFAULT_DIALOGUE_TURNS = 5;

/**
 * Asks the task's problem, then "Go on (k/n)." until `turns` replies were given. Each non-empty
 * reply earns 1/turns, so a full conversation scores 1. Deterministic, so replay rebuilds it.
 */
export class DialogueEnv extends ProblemEnv {
  readonly #turns: number;
  #replies = 0;

  constructor(task: AgentTask) {
    super(task);
    const turns = Number(task.extra_args.turns ?? DEFAULT_DIALOGUE_TURNS);
    this.#turns = Number.isInteger(turns) && turns >= 1 ? turns : DEFAULT_DIALOGUE_TURNS;
  }

  override reset(): EnvReset {
    this.#replies = 0;
    return [this.task.problem, { turns: this.#turns }];
  }

  step(action: JsonValue): EnvStepResult {
    this.#replies += 1;
    const reward = typeof action === "string" && action.trim() !== "" ? 1 / this.#turns : 0;
    const done = this.#replies >= this.#turns;
    return [
      done ? "" : `Go on (${this.#replies + 1}/${this.#turns}).`,
      reward,
      done,
      { turn: this.#replies },
    ];
  }
}
