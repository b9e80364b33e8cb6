/** @module Single-turn math: the answer in \boxed{} is graded against the task's ground truth. */
import type { AgentTask } from "../../schemas/agent-task";
import type { JsonObject, JsonValue } from "../../schemas/json";
import { BaseEnv, type EnvReset, type EnvStepResult } from "../../sdk/base-env";
import { gradeBoxedAnswer } from "../grading";

/** One question, one answer, reward 1 for a correct boxed answer. */
export class MathEnv extends BaseEnv {
  readonly #task: AgentTask;

  constructor(task: AgentTask) {
    super();
    this.#task = task;
  }

  /** Builds the env from `{ task }` (the seed's from_dict). */
  static fromDict(info: JsonObject): MathEnv {
    return new MathEnv(info.task as unknown as AgentTask);
  }

  reset(): EnvReset {
    return [this.#task.problem, {}];
  }

  step(action: JsonValue): EnvStepResult {
    const answer = typeof action === "string" ? action : "";
    const reward = gradeBoxedAnswer(answer, this.#task.ground_truth);
    return ["", reward, true, { correct: reward === 1 }];
  }
}
