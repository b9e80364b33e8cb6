import { describe, expect, it } from "vitest";
import { matchTurn, normalizeMessage } from "../../../../src/gateway/turns/turn-match";
import type { ChatMessage } from "../../../../src/schemas/chat";

const user: ChatMessage = { role: "user", content: "make answer.txt" };
const answer: ChatMessage = {
  role: "assistant",
  content: null,
  reasoning_content: "I will write it.",
  tool_calls: [
    {
      id: "call_a_0",
      type: "function",
      function: { name: "Bash", arguments: '{"command": "echo 42 > answer.txt"}' },
    },
  ],
};
const result: ChatMessage = { role: "tool", tool_call_id: "call_a_0", content: "" };
const previous = { call_id: "r/gw/a", messages: [user], response_message: answer };

describe("matchTurn", () => {
  it("recognises the previous answer by its tool-call ids and puts the recorded turn in place", () => {
    const copy = {
      role: "assistant",
      content: [{ type: "text", text: "" }],
      tool_calls: [
        {
          ...answer.tool_calls![0]!,
          function: { name: "Bash", arguments: '{"command":"echo 42 > answer.txt"}' },
        },
      ],
    } as ChatMessage;
    const match = matchTurn(previous, [user, copy, result]);
    expect(match).toMatchObject({ kind: "continues", via: "tool_call_ids", tail: [result] });
    expect(match.messages[1]).toBe(answer);
  });

  it("recognises it by the call id the gateway minted, or by equal content after normalising JSON", () => {
    const byRef = { role: "assistant", content: "x", x_gateway_call: "r/gw/a" } as ChatMessage;
    expect(matchTurn(previous, [user, byRef, result])).toMatchObject({
      kind: "continues",
      via: "call_ref",
    });
    const text = {
      ...previous,
      response_message: { role: "assistant", content: "Done." } as ChatMessage,
    };
    const copy = { role: "assistant", content: [{ type: "text", text: "Done." }] } as ChatMessage;
    expect(matchTurn(text, [user, copy, { role: "user", content: "thanks" }])).toMatchObject({
      kind: "continues",
      via: "content",
    });
  });

  it("starts fresh when an earlier message changed or the answer is not the previous one", () => {
    expect(matchTurn(previous, [{ role: "user", content: "other" }, answer, result])).toMatchObject(
      { kind: "fresh", reason: "message 0 differs from the previous call's" },
    );
    const stranger = { role: "assistant", content: "hello" } as ChatMessage;
    expect(matchTurn(previous, [user, stranger, result])).toMatchObject({
      kind: "fresh",
      reason: "message 1 is not the previous answer",
    });
    expect(matchTurn(null, [user])).toMatchObject({ kind: "fresh", reason: "first call" });
  });

  it("normalises a message the same however the harness serialised it", () => {
    const a = normalizeMessage({
      role: "user",
      content: [{ type: "text", text: "hi" }],
    } as ChatMessage);
    expect(a).toEqual({ role: "user", content: "hi" });
    expect(
      normalizeMessage({ ...answer, x_gateway_call: "r/gw/a" } as ChatMessage),
    ).not.toHaveProperty("x_gateway_call");
  });
});
