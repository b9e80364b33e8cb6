import { describe, expect, it } from "vitest";
import { CalculatorEnv } from "../../../../src/agents/calculator/calculator-env";
import { AgentTask } from "../../../../src/schemas/agent-task";

const task = AgentTask.parse({ problem: "What is (17 + 25) * 3?", ground_truth: 126 });

describe("CalculatorEnv", () => {
  it("starts with the problem as the observation", () => {
    expect(new CalculatorEnv(task).reset()).toEqual([task.problem, {}]);
    expect(CalculatorEnv.fromDict({ task: task as never }).reset()[0]).toBe(task.problem);
  });

  it("runs every tool call and returns results with matching ids, reward 0 and done false", () => {
    const env = new CalculatorEnv(task);
    const [observation, reward, done, info] = env.step({
      tool_calls: [
        { id: "call_a", name: "calculate", arguments: '{"expression": "17 + 25"}' },
        { id: "call_b", name: "calculate", arguments: '{"expression": "42 * 3"}' },
      ],
    });
    expect(observation).toEqual({
      tool_results: [
        { tool_call_id: "call_a", name: "calculate", content: "42" },
        { tool_call_id: "call_b", name: "calculate", content: "126" },
      ],
    });
    expect([reward, done]).toEqual([0, false]);
    expect(info).toEqual({ tool_calls: 2 });
  });

  it("answers an unknown tool or a bad expression with error text rather than throwing", () => {
    const env = new CalculatorEnv(task);
    const [observation, reward, done] = env.step({
      tool_calls: [
        { id: "x", name: "search", arguments: "{}" },
        { id: "y", name: "calculate", arguments: '{"expression": "1 / 0"}' },
      ],
    });
    const results = (
      observation as { tool_results: Array<{ tool_call_id: string; content: string }> }
    ).tool_results;
    expect(results.map((r) => r.tool_call_id)).toEqual(["x", "y"]);
    expect(results[0]!.content).toBe('error: unknown tool "search"');
    expect(results[1]!.content).toMatch(/^error: .*division by zero/);
    expect([reward, done]).toEqual([0, false]);
  });

  it("grades an answer action and ends the episode", () => {
    const env = new CalculatorEnv(task);
    expect(env.step({ answer: "The result is \\boxed{126}." })).toEqual([
      "",
      1,
      true,
      { correct: true },
    ]);
    expect(env.step({ answer: "The result is \\boxed{125}." })).toEqual([
      "",
      0,
      true,
      { correct: false },
    ]);
  });

  it("ends with reward 0 for an action that is neither tool calls nor an answer", () => {
    const env = new CalculatorEnv(task);
    expect(env.step("\\boxed{126}")).toEqual(["", 0, true, { correct: false }]);
    expect(env.step(null)).toEqual(["", 0, true, { correct: false }]);
  });
});
