/** Unit: Responses requests as one normalised chat-completions body, byte-identical for the same conversation. */
import { describe, expect, it } from "vitest";
import { mintTurnRef } from "../../../../../src/gateway/apis/turn-ref";
import { parseResponsesRequest, responsesToChat } from "../../../../../src/gateway/apis/responses";
import { firstCall } from "./codex-like";

const chatOf = (body: unknown) => responsesToChat(parseResponsesRequest(body));

/** The second call of a Codex task: the first call's input, the model's turn, the tool's output. */
function secondCall(turnNoise: Record<string, unknown> = {}, args = '{"command":["echo","42"]}') {
  const first = firstCall();
  return {
    ...first,
    input: [
      ...first.input,
      {
        type: "reasoning",
        id: "rs_1",
        summary: [{ type: "summary_text", text: "write it" }],
        encrypted_content: mintTurnRef("call-1"),
        ...turnNoise,
      },
      {
        type: "function_call",
        id: "fc_1",
        call_id: "call_a",
        name: "shell",
        arguments: args,
        ...turnNoise,
      },
      {
        type: "custom_tool_call",
        id: "ctc_1",
        call_id: "call_b",
        name: "apply_patch",
        input: "*** Begin Patch",
        ...turnNoise,
      },
      { type: "function_call_output", call_id: "call_a", output: "42\n" },
      {
        type: "custom_tool_call_output",
        call_id: "call_b",
        output: [{ type: "input_text", text: "Done!" }],
      },
    ],
  };
}

describe("responsesToChat", () => {
  it("puts instructions first and developer messages as system messages in place", () => {
    const { chat, stream, requestedModel } = chatOf(firstCall());
    expect(stream).toBe(true);
    expect(requestedModel).toBe("policy-under-test");
    expect(chat.messages).toEqual([
      { role: "system", content: "You are Codex, a coding agent." },
      { role: "system", content: "<permissions>sandbox</permissions>" },
      { role: "user", content: "<environment_context>cwd</environment_context>" },
      { role: "user", content: "create answer.txt containing 42" },
    ]);
    expect(chat.stream).toBe(false);
    expect(Object.keys(chat)).toEqual(["model", "messages", "tools", "tool_choice", "stream"]);
  });

  it("merges a turn's reasoning and calls into one assistant message carrying its call id", () => {
    const messages = chatOf(secondCall()).chat.messages as unknown[];
    expect(messages.slice(4)).toEqual([
      {
        role: "assistant",
        content: null,
        reasoning_content: "write it",
        tool_calls: [
          {
            id: "call_a",
            type: "function",
            function: { name: "shell", arguments: '{"command":["echo","42"]}' },
          },
          {
            id: "call_b",
            type: "function",
            function: { name: "apply_patch", arguments: '{"input":"*** Begin Patch"}' },
          },
        ],
        x_gateway_call: "call-1",
      },
      { role: "tool", tool_call_id: "call_a", content: "42\n" },
      { role: "tool", tool_call_id: "call_b", content: "Done!" },
    ]);
  });

  it("gives byte-identical messages whatever item ids, statuses, spacing or part lists vary", () => {
    const plain = JSON.stringify(chatOf(secondCall()).chat);
    const noisy = secondCall({ status: "completed", id: "other" }, '{"command": ["echo", "42"]}');
    noisy.input[2] = {
      type: "message",
      role: "user",
      content: "create answer.txt containing 42",
    } as never;
    expect(JSON.stringify(chatOf(noisy).chat)).toBe(plain);
    expect(JSON.stringify(chatOf(secondCall()).chat)).toBe(plain);
  });

  it("opens a new assistant message at a reasoning item that follows other assistant content", () => {
    const messages = chatOf({
      model: "m",
      input: [
        { type: "reasoning", summary: [], encrypted_content: mintTurnRef("c1") },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "first" }] },
        {
          type: "reasoning",
          summary: [],
          content: [{ type: "reasoning_text", text: "raw" }],
          encrypted_content: "opaque-from-elsewhere",
        },
        { type: "message", role: "assistant", content: "second" },
      ],
    }).chat.messages;
    expect(messages).toEqual([
      { role: "assistant", content: "first", x_gateway_call: "c1" },
      { role: "assistant", content: "second", reasoning_content: "raw" },
    ]);
  });

  it("translates function, custom and local_shell tools, and drops hosted ones", () => {
    const { chat } = chatOf({
      ...firstCall(),
      tools: [...firstCall().tools, { type: "local_shell" }],
    });
    const tools = chat.tools as Array<{
      function: { name: string; parameters: Record<string, unknown> };
    }>;
    expect(tools.map((tool) => tool.function.name)).toEqual([
      "shell",
      "apply_patch",
      "local_shell",
    ]);
    expect(tools[0]).toEqual({
      type: "function",
      function: { ...firstCall().tools[0], type: undefined },
    });
    expect(tools[1]!.function.parameters).toMatchObject({
      required: ["input"],
      properties: { input: { type: "string" } },
    });
    expect(JSON.stringify(tools[1])).toContain("begin_patch hunk+");
    expect(tools[2]!.function.parameters).toMatchObject({ required: ["command"] });
  });

  it("maps a local_shell call back to the function's arguments and its output to a tool message", () => {
    const { chat } = chatOf({
      model: "m",
      tools: [{ type: "local_shell" }],
      tool_choice: { type: "local_shell" },
      input: [
        {
          type: "local_shell_call",
          id: "lsh_1",
          call_id: "c9",
          status: "completed",
          action: { type: "exec", command: ["ls"], env: {}, working_directory: "/w" },
        },
        { type: "local_shell_call_output", id: "c9", output: "a.txt" },
      ],
    });
    expect(chat.tool_choice).toEqual({ type: "function", function: { name: "local_shell" } });
    expect(chat.messages).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "c9",
            type: "function",
            function: { name: "local_shell", arguments: '{"command":["ls"],"workdir":"/w"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "c9", content: "a.txt" },
    ]);
  });

  it("carries sampling settings and leaves tool_choice out when no tool translates", () => {
    const { chat } = chatOf({
      model: "m",
      input: "hi",
      tools: [{ type: "web_search" }],
      tool_choice: "required",
      max_output_tokens: 64,
      temperature: 0.5,
      top_p: 0.9,
      stop: ["END"],
    });
    expect(chat).toEqual({
      model: "m",
      messages: [{ role: "user", content: "hi" }],
      max_tokens: 64,
      temperature: 0.5,
      top_p: 0.9,
      stop: ["END"],
      stream: false,
    });
  });

  it("stands images and files in as placeholders, joined to the text by newlines", () => {
    const { chat } = chatOf({
      model: "m",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "look" },
            { type: "input_image", image_url: "data:..." },
            { type: "input_file", filename: "a.pdf" },
          ],
        },
      ],
    });
    expect(chat.messages).toEqual([{ role: "user", content: "look\n[image]\n[file: a.pdf]" }]);
  });
});
