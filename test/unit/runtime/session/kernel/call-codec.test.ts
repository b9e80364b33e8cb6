import { describe, expect, it } from "vitest";
import { decodeCall, encodeCall } from "../../../../../src/runtime/session/kernel/call-codec";
import { splitText } from "../../../../../src/runtime/value-parts";
import { LlmCall } from "../../../../../src/schemas/llm-call";

function call(
  id: string,
  messages: unknown[],
  promptIds: number[],
  completionIds: number[],
  reply: string,
): LlmCall {
  return LlmCall.parse({
    call_id: id,
    rollout_id: "r",
    request: { model: "m", messages },
    response_message: { role: "assistant", content: reply },
    prompt_token_ids: promptIds,
    completion_token_ids: completionIds,
    logprobs: completionIds.map(() => -0.5),
    logprobs_mode: "raw_logprobs",
    finish_reason: "stop",
    usage: {
      prompt_tokens: promptIds.length,
      completion_tokens: completionIds.length,
      total_tokens: promptIds.length + completionIds.length,
    },
    backend: "vllm",
    replica: "x",
    latency_ms: 1,
    trainable: true,
    created_at: 0,
  });
}

describe("call codec (unit)", () => {
  const user = { role: "user", content: "long question" };
  const first = call("c1", [user], [1, 2, 3, 4], [5, 6], "first answer");
  const second = call(
    "c2",
    [user, { role: "assistant", content: "first answer" }, { role: "user", content: "more" }],
    [1, 2, 3, 4, 5, 6, 7, 8],
    [9],
    "second",
  );

  it("stores a call as what its predecessor lacks and reads it back exactly", () => {
    const stored = encodeCall(second, first);
    expect(stored.prompt_token_ids).toEqual([7, 8]);
    expect(stored.request.messages).toEqual([{ role: "user", content: "more" }]);
    expect(stored.stored_prefix).toEqual({ of: "c1", prompt_tokens: 6, messages: 2 });
    expect(decodeCall(JSON.parse(JSON.stringify(stored)), first)).toEqual(second);
  });

  it("keeps a call whole when it shares nothing with its predecessor, and refuses to decode against the wrong one", () => {
    const unrelated = call("c3", [{ role: "user", content: "other" }], [9, 9], [1], "x");
    expect(encodeCall(unrelated, first)).toEqual(unrelated);
    expect(() => decodeCall(encodeCall(second, first), unrelated)).toThrow(/encoded against c1/);
  });

  it("keeps a template that is not append-only exact: only the ids that match are shared", () => {
    const drifted = call("c4", [user], [1, 2, 99, 4, 5], [7], "y");
    const stored = encodeCall(drifted, first);
    expect(stored.prompt_token_ids).toEqual([99, 4, 5]);
    expect(decodeCall(stored, first)).toEqual(drifted);
  });
});

describe("splitText (unit)", () => {
  it("cuts into bounded parts that join back, never between the halves of a surrogate pair", () => {
    const text = `ab${"🧮".repeat(5)}cd`;
    const parts = splitText(text, 3);
    expect(parts.join("")).toBe(text);
    expect(
      parts.every(
        (part) =>
          part.length <= 3 && !/^[\udc00-\udfff]/.test(part) && !/[\ud800-\udbff]$/.test(part),
      ),
    ).toBe(true);
    expect(splitText("short", 10)).toEqual(["short"]);
  });
});
