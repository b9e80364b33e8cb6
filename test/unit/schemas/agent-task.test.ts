import { describe, expect, it } from "vitest";
import { AGENT_TASK_SCHEMA_VERSION, AgentTask } from "../../../src/schemas/agent-task";

describe("AgentTask", () => {
  it("fills every field but problem with its default", () => {
    expect(AgentTask.parse({ problem: "What is 2 + 2?" })).toEqual({
      schema_version: AGENT_TASK_SCHEMA_VERSION,
      task_id: "",
      sample_id: 0,
      iteration: 0,
      agent_name: "",
      problem: "What is 2 + 2?",
      ground_truth: null,
      prompt_id: "",
      content: null,
      extra_args: {},
    });
  });

  it("keeps any JSON ground truth and extra args as given", () => {
    const task = AgentTask.parse({
      problem: "p",
      ground_truth: { answers: [4, "four"] },
      extra_args: { level: 3, tags: ["a"] },
    });
    expect(task.ground_truth).toEqual({ answers: [4, "four"] });
    expect(task.extra_args).toEqual({ level: 3, tags: ["a"] });
  });

  it("rejects a missing problem, negative counters and another schema version", () => {
    expect(AgentTask.safeParse({}).error?.issues.map((issue) => issue.path)).toEqual([["problem"]]);
    expect(AgentTask.safeParse({ problem: "p", sample_id: -1 }).success).toBe(false);
    expect(AgentTask.safeParse({ problem: "p", iteration: 0.5 }).success).toBe(false);
    expect(
      AgentTask.safeParse({ problem: "p", schema_version: AGENT_TASK_SCHEMA_VERSION + 1 }).success,
    ).toBe(false);
  });
});
