import { describe, expect, it } from "vitest";
import { ChatMessage } from "../../../src/schemas/chat";
import type { LlmCall } from "../../../src/schemas/llm-call";
import { requestMessages } from "../../../src/sink/formats/atif-steps";

/** A call whose request sent `messages` (requestMessages reads nothing else of it). */
const callSending = (messages: unknown): LlmCall =>
  ({ request: { model: "m", messages } }) as unknown as LlmCall;

describe("requestMessages (the turns an ATIF document reads from a call)", () => {
  it("reads plain text turns as ChatMessage would, extra fields and null content included", () => {
    const sent = [
      { role: "system", content: "Be brief." },
      { role: "user", content: "6 * 7?", name: "alice" },
      { role: "assistant", content: null, reasoning_content: null, refusal: null },
      { role: "tool", content: "42", tool_call_id: "c1" },
    ];
    expect(requestMessages(callSending(sent))).toEqual(sent.map((m) => ChatMessage.parse(m)));
  });

  it("parses tool calls and content parts with the schema (the tool call's type filled in)", () => {
    const sent = [
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", function: { name: "calc", arguments: "{}" } }],
      },
      { role: "user", content: [{ type: "text", text: "and 2 + 2?" }] },
    ];
    const read = requestMessages(callSending(sent));
    expect(read[0]?.tool_calls?.[0]?.type).toBe("function");
    expect(read[1]?.content).toEqual([{ type: "text", text: "and 2 + 2?" }]);
  });

  it("reads no turns from a request with any message that is not a chat message", () => {
    for (const bad of [
      { role: "robot", content: "beep" },
      { role: "user", content: 42 },
      { role: "user", content: "hi", name: 7 },
      { role: "tool", content: "42", tool_call_id: null },
      ["user", "hi"],
    ])
      expect(requestMessages(callSending([{ role: "user", content: "ok" }, bad]))).toEqual([]);
    expect(requestMessages(callSending("not a list"))).toEqual([]);
  });
});
