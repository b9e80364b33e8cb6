/** Unit: a whole chat completion as a Responses `response` object, and that object sent back as the next call's input. */
import { describe, expect, it } from "vitest";
import {
  type ChatReplyJson,
  chatToResponses,
  parseResponsesRequest,
  responsesToChat,
  UnusableReplyError,
} from "../../../../../src/gateway/apis/responses";
import { mintTurnRef } from "../../../../../src/gateway/apis/turn-ref";
import { firstCall } from "./codex-like";

const request = parseResponsesRequest(firstCall());

type ReplyMessage = {
  content?: string;
  reasoning_content?: string;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
};

function reply(message: ReplyMessage, finish = "stop"): ChatReplyJson {
  return {
    created: 1_700_000_000,
    choices: [{ message, finish_reason: finish }],
    usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150 },
  };
}

const answer = (r: ChatReplyJson) =>
  chatToResponses(r, { model: "policy-under-test", callId: "call-1", request });

describe("chatToResponses", () => {
  it("answers reasoning, text and a function call as items in the API's order", () => {
    const response = answer(
      reply(
        {
          content: "Writing it.",
          reasoning_content: "use the shell",
          tool_calls: [
            {
              id: "call_a",
              function: {
                name: "shell",
                arguments: '{"command":["sh","-c","echo 42 > answer.txt"]}',
              },
            },
          ],
        },
        "tool_calls",
      ),
    );
    expect(response).toMatchObject({
      object: "response",
      status: "completed",
      model: "policy-under-test",
      created_at: 1_700_000_000,
      incomplete_details: null,
      error: null,
    });
    expect(response.id).toMatch(/^resp_[0-9a-f]{16}$/);
    expect(response.output).toEqual([
      {
        id: expect.stringMatching(/^rs_/),
        type: "reasoning",
        summary: [{ type: "summary_text", text: "use the shell" }],
        encrypted_content: mintTurnRef("call-1"),
      },
      {
        id: expect.stringMatching(/^msg_/),
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: "Writing it.", annotations: [] }],
      },
      {
        id: expect.stringMatching(/^fc_/),
        type: "function_call",
        status: "completed",
        call_id: "call_a",
        name: "shell",
        arguments: '{"command":["sh","-c","echo 42 > answer.txt"]}',
      },
    ]);
    expect(response.usage).toEqual({
      input_tokens: 120,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 30,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 150,
    });
  });

  it("keeps the reasoning item, empty, when the model gave no reasoning: it carries the turn reference", () => {
    const output = answer(reply({ content: "42" })).output as Array<Record<string, unknown>>;
    expect(output[0]).toMatchObject({
      type: "reasoning",
      summary: [],
      encrypted_content: mintTurnRef("call-1"),
    });
    expect(output).toHaveLength(2);
  });

  it("answers a custom tool's call as custom_tool_call with its input, and bad JSON as a raw function_call", () => {
    const output = answer(
      reply({
        tool_calls: [
          {
            id: "p1",
            function: {
              name: "apply_patch",
              arguments: '{"input":"*** Begin Patch\\n*** End Patch"}',
            },
          },
          { id: "p2", function: { name: "apply_patch", arguments: "*** Begin Patch" } },
          { id: "s1", function: { name: "shell", arguments: '{"command": [' } },
        ],
      }),
    ).output as Array<Record<string, unknown>>;
    expect(output.slice(1)).toMatchObject([
      {
        type: "custom_tool_call",
        call_id: "p1",
        name: "apply_patch",
        input: "*** Begin Patch\n*** End Patch",
      },
      { type: "function_call", call_id: "p2", name: "apply_patch", arguments: "*** Begin Patch" },
      { type: "function_call", call_id: "s1", name: "shell", arguments: '{"command": [' },
    ]);
    expect(new Set(output.map((item) => item.id)).size).toBe(4);
  });

  it("is incomplete with reason max_output_tokens when the reply hit its length", () => {
    const response = answer(reply({ content: "partial" }, "length"));
    expect(response.status).toBe("incomplete");
    expect(response.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect((response.output as Array<Record<string, unknown>>)[1]!.status).toBe("incomplete");
  });

  it("echoes the request's settings the SDK types", () => {
    const response = answer(reply({ content: "ok" }));
    expect(response).toMatchObject({
      instructions: "You are Codex, a coding agent.",
      tool_choice: "auto",
      parallel_tool_calls: true,
      store: false,
      tools: firstCall().tools,
    });
  });

  it("gives back, as the next call's input, chat messages that extend the first call's by its own turn", () => {
    const first = responsesToChat(request).chat.messages as unknown[];
    const turn = reply(
      {
        reasoning_content: "shell it",
        tool_calls: [
          { id: "call_a", function: { name: "shell", arguments: '{"command":["ls"]}' } },
        ],
      },
      "tool_calls",
    );
    const output = answer(turn).output as unknown[];
    const next = parseResponsesRequest({
      ...firstCall(),
      input: [
        ...firstCall().input,
        ...output,
        { type: "function_call_output", call_id: "call_a", output: "ok" },
      ],
    });
    const messages = responsesToChat(next).chat.messages as unknown[];
    expect(messages.slice(0, first.length)).toEqual(first);
    expect(messages[first.length]).toEqual({
      role: "assistant",
      content: null,
      reasoning_content: "shell it",
      tool_calls: [
        {
          id: "call_a",
          type: "function",
          function: { name: "shell", arguments: '{"command":["ls"]}' },
        },
      ],
      x_gateway_call: "call-1",
    });
  });

  it("refuses, as the gateway's 502, a reply that is not a chat completion", () => {
    expect(() => answer({ choices: [] })).toThrow(UnusableReplyError);
    expect(() => answer({ object: "error" })).toThrow(/not a chat completion \(choices: /);
  });
});
