import { describe, expect, it } from "vitest";
import { chatToMessages, UnusableReplyError } from "../../../../../src/gateway/apis/messages";
import { mintTurnRef } from "../../../../../src/gateway/apis/turn-ref";
import type { VllmChatCompletion } from "../../../../../src/schemas/vllm-chat";

const context = { model: "claude-sonnet-4-5", callId: "r1:0:0/call-3" };

function reply(
  message: Record<string, unknown>,
  finish = "stop",
  extra: Record<string, unknown> = {},
) {
  return {
    id: "chatcmpl-1",
    model: "policy",
    choices: [
      { index: 0, message: { role: "assistant", ...message }, finish_reason: finish, ...extra },
    ],
    usage: { prompt_tokens: 40, completion_tokens: 12, total_tokens: 52 },
  };
}

describe("chatToMessages", () => {
  it("answers thinking, text, then tool_use blocks, signed with the call's turn reference", () => {
    const message = chatToMessages(
      reply(
        {
          content: "Let me look.",
          reasoning_content: "plan",
          tool_calls: [
            {
              id: "call_a",
              type: "function",
              function: { name: "Bash", arguments: '{"command": "ls"}' },
            },
          ],
        },
        "tool_calls",
      ),
      context,
    );
    expect(message).toEqual({
      id: "msg_r1_0_0_call-3",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [
        { type: "thinking", thinking: "plan", signature: mintTurnRef("r1:0:0/call-3") },
        { type: "text", text: "Let me look." },
        { type: "tool_use", id: "call_a", name: "Bash", input: { command: "ls" } },
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: {
        input_tokens: 40,
        output_tokens: 12,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    });
  });

  it("reads vLLM's newer `reasoning` field and skips empty text", () => {
    const message = chatToMessages(reply({ content: "", reasoning: "r" }), context);
    expect(message.content).toEqual([
      { type: "thinking", thinking: "r", signature: mintTurnRef(context.callId) },
    ]);
    expect(message.stop_reason).toBe("end_turn");
  });

  it("answers tool arguments that are not a JSON object as text, never an error", () => {
    const calls = ["{bad json", "[1,2]", "null"].map((args, i) => ({
      id: `c${i}`,
      type: "function",
      function: { name: "B", arguments: args },
    }));
    const message = chatToMessages(
      reply({ content: null, tool_calls: calls }, "tool_calls"),
      context,
    );
    expect(message.content).toEqual([
      { type: "text", text: "{bad json" },
      { type: "text", text: "[1,2]" },
      { type: "text", text: "null" },
    ]);
    expect(message.stop_reason).toBe("end_turn");
    const empty = chatToMessages(
      reply({ tool_calls: [{ id: "c", function: { name: "B", arguments: "" } }] }, "tool_calls"),
      context,
    );
    expect(empty.content).toEqual([{ type: "tool_use", id: "c", name: "B", input: {} }]);
  });

  it("maps finish reasons to stop reasons", () => {
    const stop = (finish: string, extra = {}, stopSequences?: string[]) =>
      chatToMessages(reply({ content: "x" }, finish, extra), { ...context, stopSequences });
    expect(stop("stop").stop_reason).toBe("end_turn");
    expect(stop("length").stop_reason).toBe("max_tokens");
    expect(stop("stop", { stop_reason: "END" }, ["END"])).toMatchObject({
      stop_reason: "stop_sequence",
      stop_sequence: "END",
    });
    expect(stop("stop", { stop_reason: "END" })).toMatchObject({
      stop_reason: "end_turn",
      stop_sequence: null,
    });
    expect(stop("stop", { stop_reason: 151645 }, ["END"]).stop_reason).toBe("end_turn");
  });

  it("accepts a typed vLLM completion and refuses a reply that is not a chat completion with 502", () => {
    const typed: VllmChatCompletion = reply({ content: "ok" }) as VllmChatCompletion;
    expect(chatToMessages(typed, context).content).toEqual([{ type: "text", text: "ok" }]);
    const bad = () => chatToMessages({ choices: [] }, context);
    expect(bad).toThrow(UnusableReplyError);
    expect(bad).toThrow(/choices/);
    try {
      bad();
    } catch (error) {
      expect((error as UnusableReplyError).status).toBe(502);
    }
  });

  it("reports zero tokens when the reply has no usage", () => {
    const { usage: _, ...bare } = reply({ content: "x" });
    expect(chatToMessages(bare, context).usage).toMatchObject({
      input_tokens: 0,
      output_tokens: 0,
    });
  });
});
