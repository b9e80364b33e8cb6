/** @module Single-turn math: the answer in \boxed{} is graded against the task's ground truth. */
import type { JsonValue } from "../../schemas/json";
import type { EnvStepResult } from "../../sdk/base-env";
import { ProblemEnv } from "../problem-env";
import { gradeBoxedAnswer } from "../grading";

/** One question, one answer, reward 1 for a correct boxed answer. */
export class MathEnv extends ProblemEnv {
  step(action: JsonValue): EnvStepResult {
    const answer = typeof action === "string" ? action : "";
    const reward = gradeBoxedAnswer(answer, this.task.ground_truth);
    return ["", reward, true, { correct: reward === 1 }];
  }
}
