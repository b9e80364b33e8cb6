import { describe, expect, it } from "vitest";
import { CreateRolloutRequest, RolloutId } from "../../../src/schemas/rollout-api";
import { RolloutConfig } from "../../../src/schemas/rollout-config";

describe("CreateRolloutRequest", () => {
  it("fills the task and config defaults", () => {
    const request = CreateRolloutRequest.parse({
      agent: "math",
      task: { problem: "What is 2 + 2?" },
    });
    expect(request.config).toEqual(RolloutConfig.parse({}));
    expect(request.task.ground_truth).toBeNull();
    expect(request.rollout_id).toBeUndefined();
  });

  it("rejects unknown top-level keys and an empty agent, naming the field", () => {
    expect(
      CreateRolloutRequest.safeParse({ agent: "math", task: { problem: "p" }, extra: 1 }).success,
    ).toBe(false);
    const issues = CreateRolloutRequest.safeParse({ agent: "", task: { problem: "p" } }).error!
      .issues;
    expect(issues.map((issue) => [issue.path.join("."), issue.message])).toEqual([
      ["agent", "agent must name a registered agent"],
    ]);
    expect(
      CreateRolloutRequest.safeParse({
        agent: "math",
        task: { problem: "p" },
        config: { max_steps: 0 },
      }).error!.issues[0]!.path,
    ).toEqual(["config", "max_steps"]);
  });
});

describe("RolloutId", () => {
  it("accepts 1-200 printable id characters and nothing else", () => {
    for (const id of ["r", "run-1.step_2:x", "A".repeat(200)])
      expect(RolloutId.safeParse(id).success, id).toBe(true);
    for (const id of ["", "A".repeat(201), "has space", "slash/inside", "ünï", "new\nline"])
      expect(RolloutId.safeParse(id).success, id).toBe(false);
  });
});
