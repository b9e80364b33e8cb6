import { describe, expect, it } from "vitest";
import { LLM_CALL_SCHEMA_VERSION, LlmCall, type LlmCallInput } from "../../../src/schemas/llm-call";

const call = (overrides: Partial<LlmCallInput> = {}): LlmCallInput => ({
  call_id: "r/step/0/call/a",
  rollout_id: "r",
  request: { model: "m", messages: [] },
  response_message: { role: "assistant", content: "hi" },
  prompt_token_ids: [1, 2, 3],
  completion_token_ids: [10, 11],
  logprobs: [-0.5, -0.25],
  logprobs_mode: "raw_logprobs",
  finish_reason: "stop",
  usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
  backend: "vllm",
  replica: "http://127.0.0.1:8000/v1",
  latency_ms: 12,
  trainable: true,
  created_at: 1_700_000_000_000,
  ...overrides,
});

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
