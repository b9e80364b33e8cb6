import { describe, expect, it } from "vitest";
import { RolloutConfig, leaseTtlMs } from "../../../src/schemas/rollout-config";

function issuesOf(input: unknown): Array<{ path: string; message: string }> {
  const result = RolloutConfig.safeParse(input);
  expect(result.success).toBe(false);
  return result.error!.issues.map((issue) => ({
    path: issue.path.join("."),
    message: issue.message,
  }));
}

describe("RolloutConfig", () => {
  it("defaults to 5 steps, 131072 prompt tokens and 8192 response tokens", () => {
    expect(RolloutConfig.parse({})).toMatchObject({
      max_steps: 5,
      max_prompt_length: 131072,
      max_response_length: 8192,
      max_tokens_per_call: null,
      temperature: 1,
      top_p: 1,
      seed: null,
      model: null,
      mode: "train",
    });
  });

  it("names the field in the message for out-of-range limits", () => {
    expect(issuesOf({ max_steps: 0 })).toEqual([
      { path: "max_steps", message: "max_steps must be >= 1" },
    ]);
    expect(issuesOf({ max_steps: 1001 })).toEqual([
      { path: "max_steps", message: "max_steps must be <= 1000" },
    ]);
    expect(issuesOf({ max_prompt_length: -5 })).toEqual([
      { path: "max_prompt_length", message: "max_prompt_length must be >= 1" },
    ]);
    expect(issuesOf({ max_tokens_per_call: 0 })).toEqual([
      { path: "max_tokens_per_call", message: "max_tokens_per_call must be >= 1" },
    ]);
    expect(issuesOf({ max_stalls: 21 })).toEqual([
      { path: "max_stalls", message: "max_stalls must be <= 20" },
    ]);
  });

  it("names the field for non-integers and for sampling settings out of range", () => {
    expect(issuesOf({ max_response_length: 1.5 })).toEqual([
      { path: "max_response_length", message: "max_response_length must be an integer" },
    ]);
    expect(issuesOf({ temperature: 2.5 })).toEqual([
      { path: "temperature", message: "temperature must be <= 2" },
    ]);
    expect(issuesOf({ temperature: -0.1 })).toEqual([
      { path: "temperature", message: "temperature must be >= 0" },
    ]);
    expect(issuesOf({ top_p: 0 })).toEqual([{ path: "top_p", message: "top_p must be > 0" }]);
    expect(issuesOf({ top_p: 1.01 })).toEqual([{ path: "top_p", message: "top_p must be <= 1" }]);
  });

  it("rejects unknown keys, naming them", () => {
    const issues = RolloutConfig.safeParse({ max_step: 3 }).error!.issues;
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ code: "unrecognized_keys", keys: ["max_step"] });
    expect(issues[0]!.message).toContain("max_step");
  });

  it("reports every bad field at once", () => {
    expect(
      issuesOf({ max_steps: 0, top_p: 0, mode: "eval" })
        .map((issue) => issue.path)
        .sort(),
    ).toEqual(["max_steps", "mode", "top_p"]);
  });

  it("gives the lease more time than a step may take", () => {
    const config = RolloutConfig.parse({ step_timeout_ms: 1_000 });
    expect(leaseTtlMs(config)).toBeGreaterThan(config.step_timeout_ms);
  });
});
