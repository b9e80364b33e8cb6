import { describe, expect, it } from "vitest";
import { STEP_SCHEMA_VERSION, Step, stepIdFor } from "../../../src/schemas/step";

describe("stepIdFor", () => {
  it("gives the same id for the same rollout and index", () => {
    expect(stepIdFor("rollout-a", 3)).toBe(stepIdFor("rollout-a", 3));
  });

  it("gives different ids for different indexes or rollouts", () => {
    const ids = new Set([
      stepIdFor("rollout-a", 0),
      stepIdFor("rollout-a", 1),
      stepIdFor("rollout-b", 0),
      stepIdFor("rollout-a", 10),
      stepIdFor("rollout-a1", 0),
    ]);
    expect(ids.size).toBe(5);
  });
});

describe("Step", () => {
  it("fills defaults around the id, index, action and observation", () => {
    const step = Step.parse({
      step_id: stepIdFor("r", 0),
      step_index: 0,
      action: { answer: "4" },
      observation: "What is 2 + 2?",
    });
    expect(step).toMatchObject({
      schema_version: STEP_SCHEMA_VERSION,
      next_observation: null,
      reward: 0,
      done: false,
      info: {},
      llm_call_ids: [],
      chat_completions: [],
      model_response: "",
    });
    expect(step.action).toEqual({ answer: "4" });
  });

  it("rejects an empty step id, a negative index and a negative duration", () => {
    const base = { step_id: "r/step/0", step_index: 0, action: null, observation: null };
    expect(Step.safeParse(base).success).toBe(true);
    expect(Step.safeParse({ ...base, step_id: "" }).success).toBe(false);
    expect(Step.safeParse({ ...base, step_index: -1 }).success).toBe(false);
    expect(Step.safeParse({ ...base, duration_ms: -1 }).success).toBe(false);
  });
});
