import { describe, expect, it } from "vitest";
import { LLM_CALL_SCHEMA_VERSION, LlmCall } from "../../../src/schemas/llm-call";
import { llmCallInput } from "../../fixtures/llm-calls";

const call = llmCallInput;

describe("LlmCall", () => {
  it("fills the schema version, step id, policy versions and attempts", () => {
    expect(LlmCall.parse(call())).toMatchObject({
      schema_version: LLM_CALL_SCHEMA_VERSION,
      step_id: null,
      policy_version_start: 0,
      policy_version_end: 0,
      attempts: 1,
    });
  });

  it("requires the request to be an object, naming the field", () => {
    for (const request of [[{ model: "m" }], "body", null]) {
      const result = LlmCall.safeParse(call({ request: request as never }));
      expect(result.success).toBe(false);
      expect(result.error!.issues[0]).toMatchObject({
        path: ["request"],
        message: "must be an object (the body sent upstream)",
      });
    }
  });

  it("requires one logprob per completion token", () => {
    const result = LlmCall.safeParse(call({ logprobs: [-0.5] }));
    expect(result.success).toBe(false);
    expect(result.error!.issues).toEqual([
      expect.objectContaining({
        path: ["logprobs"],
        message: "logprobs must have one entry per completion token",
      }),
    ]);
    expect(LlmCall.safeParse(call({ logprobs: [-1, -1, -1] })).success).toBe(false);
  });

  it("accepts a call without logprobs", () => {
    expect(
      LlmCall.safeParse(call({ logprobs: [], logprobs_mode: "none", trainable: false })).success,
    ).toBe(true);
    expect(LlmCall.safeParse(call({ completion_token_ids: [], logprobs: [] })).success).toBe(true);
  });

  it("rejects empty ids, non-integer token ids and zero attempts", () => {
    expect(LlmCall.safeParse(call({ call_id: "" })).success).toBe(false);
    expect(LlmCall.safeParse(call({ prompt_token_ids: [1.5] })).success).toBe(false);
    expect(LlmCall.safeParse(call({ attempts: 0 })).success).toBe(false);
    expect(LlmCall.safeParse(call({ latency_ms: -1 })).success).toBe(false);
  });
});
