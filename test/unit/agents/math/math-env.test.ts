import { describe, expect, it } from "vitest";
import { MathEnv } from "../../../../src/agents/math/math-env";
import { AgentTask } from "../../../../src/schemas/agent-task";

const task = AgentTask.parse({ problem: "What is 6 * 7?", ground_truth: "42" });

describe("MathEnv", () => {
  it("starts with the problem as the observation", () => {
    expect(new MathEnv(task).reset()).toEqual(["What is 6 * 7?", {}]);
    expect(MathEnv.fromDict({ task: task as never }).reset()[0]).toBe("What is 6 * 7?");
  });

  it("grades the boxed answer against the ground truth and ends the episode", () => {
    const env = new MathEnv(task);
    expect(env.step("6 * 7 = 42, so \\boxed{42}")).toEqual(["", 1, true, { correct: true }]);
    expect(env.step("6 * 7 = 43, so \\boxed{43}")).toEqual(["", 0, true, { correct: false }]);
  });

  it("scores 0 for a non-string action or a task without ground truth", () => {
    expect(new MathEnv(task).step({ answer: "\\boxed{42}" })).toEqual([
      "",
      0,
      true,
      { correct: false },
    ]);
    const open = new MathEnv(AgentTask.parse({ problem: "Say anything" }));
    expect(open.step("\\boxed{42}")[1]).toBe(0);
  });
});
