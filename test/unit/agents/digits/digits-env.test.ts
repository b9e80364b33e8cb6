import { describe, expect, it } from "vitest";
import { DigitsEnv, copyPrompt } from "../../../../src/agents/digits/digits-env";
import { AgentTask } from "../../../../src/schemas/agent-task";

const task = (truth: string) =>
  AgentTask.parse({ problem: copyPrompt(truth[0]!), ground_truth: truth });

describe("DigitsEnv", () => {
  it("asks for one digit and scores an exact copy 1, anything else 0", () => {
    const env = new DigitsEnv(task("7"));
    expect(env.reset()).toEqual(["Copy the digit 7.", { turns: 1 }]);
    expect(env.step(" 7")).toEqual(["", 1, true, { correct: true }]);
    env.reset();
    expect(env.step("77")).toEqual(["", 0, true, { correct: false }]);
  });

  it("asks for the next digit in the second turn and scores each turn half", () => {
    const env = new DigitsEnv(task("73"));
    env.reset();
    expect(env.step("7")).toEqual(["Copy the digit 3.", 0.5, false, { correct: true }]);
    expect(env.step("4")).toEqual(["", 0, true, { correct: false }]);
  });
});
