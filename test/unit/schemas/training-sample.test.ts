import { describe, expect, it } from "vitest";
import { TrainingSample } from "../../../src/schemas/training-sample";

const sample = {
  uid: "group-1",
  sample_index: 0,
  rollout_id: "r-1",
  segment_index: 0,
  prompt_ids: [1, 2, 3],
  response_ids: [4, 5, 6],
  response_mask: [1, 0, 1],
  response_logprobs: [-0.5, 0, -0.25],
  reward_score: 1,
  num_turns: 3,
  termination_reason: "ENV_DONE",
  policy_version: { start: 0, end: 0 },
};

/** The first refusal as `path: message`. */
function refusal(raw: unknown): string {
  const parsed = TrainingSample.safeParse(raw);
  if (parsed.success) throw new Error("accepted");
  const issue = parsed.error.issues[0]!;
  return `${issue.path.join(".")}: ${issue.message}`;
}

describe("TrainingSample", () => {
  it("accepts a token-exact sample and fills its defaults", () => {
    expect(TrainingSample.parse(sample)).toMatchObject({
      ...sample,
      schema_version: 2,
      extra_fields: {},
    });
  });

  it("reads a version-1 sample as it was stored, and refuses an unknown version", () => {
    expect(TrainingSample.parse({ ...sample, schema_version: 1 })).toMatchObject({
      schema_version: 1,
    });
    expect(
      TrainingSample.parse({ ...sample, schema_version: 1 }).response_policy_versions,
    ).toBeUndefined();
    expect(refusal({ ...sample, schema_version: 3 })).toMatch(/^schema_version: /);
  });

  it("refuses bad token arrays, naming the field", () => {
    expect(refusal({ ...sample, prompt_ids: [1, -2, 3] })).toMatch(/^prompt_ids: /);
    expect(refusal({ ...sample, response_ids: [4, 5.5, 6] })).toMatch(/^response_ids: /);
    expect(refusal({ ...sample, response_mask: [1, 2, 1] })).toMatch(
      /^response_mask: must be an array of 0 and 1/,
    );
    expect(refusal({ ...sample, response_logprobs: [-0.5, "0", -0.25] })).toMatch(
      /^response_logprobs: /,
    );
  });

  it("refuses arrays of different lengths", () => {
    expect(refusal({ ...sample, response_mask: [1, 0] })).toBe(
      "response_mask: response_mask must be as long as response_ids",
    );
    expect(refusal({ ...sample, response_logprobs: [-0.5] })).toBe(
      "response_logprobs: response_logprobs must be as long as response_ids",
    );
  });
});
