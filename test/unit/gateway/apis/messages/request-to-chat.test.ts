import { describe, expect, it } from "vitest";
import {
  MessagesCountTokensRequest,
  MessagesRequest,
  messagesToChat,
} from "../../../../../src/gateway/apis/messages";
import { mintTurnRef } from "../../../../../src/gateway/apis/turn-ref";

const request = (body: Record<string, unknown>) =>
  MessagesRequest.parse({ model: "claude-x", max_tokens: 100, ...body });
const chatOf = (body: Record<string, unknown>) => messagesToChat(request(body)).chat;

describe("messagesToChat", () => {
  it("keeps the sampling fields in a fixed order, stream false, and reports the stream and model", () => {
    const translated = messagesToChat(
      request({
        messages: [{ role: "user", content: "hi" }],
        stream: true,
        stop_sequences: ["END"],
        top_k: 5,
        temperature: 0.5,
        top_p: 0.9,
        thinking: { type: "disabled" },
        metadata: { user_id: "u" },
      }),
    );
    expect(translated.stream).toBe(true);
    expect(translated.requestedModel).toBe("claude-x");
    expect(JSON.stringify(translated.chat)).toBe(
      JSON.stringify({
        model: "claude-x",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 100,
        temperature: 0.5,
        top_p: 0.9,
        top_k: 5,
        stop: ["END"],
        chat_template_kwargs: { enable_thinking: false },
        stream: false,
      }),
    );
    expect(
      messagesToChat(request({ messages: [{ role: "user", content: "hi" }] }), { model: "policy" })
        .chat.model,
    ).toBe("policy");
  });

  it("puts the system prompt first, joins its blocks with newlines, and keeps inner system messages in place", () => {
    const chat = chatOf({
      system: [
        { type: "text", text: "a" },
        { type: "text", text: "b", cache_control: { type: "ephemeral" } },
      ],
      messages: [
        { role: "system", content: [{ type: "text", text: "note" }] },
        { role: "user", content: "q" },
      ],
    });
    expect(chat.messages).toEqual([
      { role: "system", content: "a\nb" },
      { role: "system", content: "note" },
      { role: "user", content: "q" },
    ]);
  });

  it("leaves Claude Code's billing marker out of the system prompt", () => {
    const chat = chatOf({
      system: [
        {
          type: "text",
          text: "x-anthropic-billing-header: cc_version=2.1.332.79f; cc_entrypoint=sdk-cli;",
        },
        { type: "text", text: "You are Claude Code." },
      ],
      messages: [{ role: "user", content: "q" }],
    });
    expect(chat.messages).toEqual([
      { role: "system", content: "You are Claude Code." },
      { role: "user", content: "q" },
    ]);
  });

  it("turns tool results into tool messages before the turn's text, placeholders for media", () => {
    const chat = chatOf({
      messages: [
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "t1", content: "out", is_error: true },
            {
              type: "tool_result",
              tool_use_id: "t2",
              content: [
                { type: "text", text: "x" },
                { type: "text", text: "y" },
              ],
            },
            { type: "tool_result", tool_use_id: "t3" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "AA==" } },
            { type: "text", text: "next" },
          ],
        },
      ],
    });
    expect(chat.messages).toEqual([
      { role: "tool", tool_call_id: "t1", content: "out" },
      { role: "tool", tool_call_id: "t2", content: "x\ny" },
      { role: "tool", tool_call_id: "t3", content: "" },
      { role: "user", content: "[image]\nnext" },
    ]);
  });

  it("turns an assistant turn into content, reasoning, tool calls and the call it came from", () => {
    const chat = chatOf({
      messages: [
        { role: "user", content: "go" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "plan", signature: mintTurnRef("call-7") },
            { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls", n: 1 } },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "t", signature: "not-ours" },
            { type: "text", text: "done" },
          ],
        },
      ],
    });
    expect(chat.messages).toEqual([
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: null,
        reasoning_content: "plan",
        tool_calls: [
          {
            id: "toolu_1",
            type: "function",
            function: { name: "Bash", arguments: '{"command":"ls","n":1}' },
          },
        ],
        x_gateway_call: "call-7",
      },
      { role: "assistant", content: "done", reasoning_content: "t" },
    ]);
  });

  it("offers client tools as functions, drops server tools, and maps tool_choice", () => {
    const tools = [
      {
        name: "Bash",
        description: "run",
        input_schema: { type: "object", properties: {} },
        cache_control: { type: "ephemeral" },
      },
      { name: "Later", input_schema: { type: "object" }, defer_loading: true },
      { type: "web_search_20250305", name: "web_search" },
    ];
    const messages = [{ role: "user", content: "q" }];
    const chat = chatOf({ tools, messages, tool_choice: { type: "any" } });
    expect(chat.tools).toEqual([
      {
        type: "function",
        function: {
          name: "Bash",
          description: "run",
          parameters: { type: "object", properties: {} },
        },
      },
      { type: "function", function: { name: "Later", parameters: { type: "object" } } },
    ]);
    expect(chat.tool_choice).toBe("required");
    expect(
      chatOf({ tools, messages, tool_choice: { type: "tool", name: "Bash" } }).tool_choice,
    ).toEqual({ type: "function", function: { name: "Bash" } });
    expect(chatOf({ tools, messages, tool_choice: { type: "none" } }).tool_choice).toBe("none");
    expect(
      chatOf({ tools: [tools[2]], messages, tool_choice: { type: "any" } }),
    ).not.toHaveProperty("tools");
  });

  it("gives byte-identical messages for one conversation whatever cache_control or block form", () => {
    const turn = (cached: number) => ({
      system: [
        {
          type: "text",
          text: "s",
          ...(cached === 0 ? { cache_control: { type: "ephemeral" } } : {}),
        },
      ],
      messages: [
        cached === 1
          ? {
              role: "user",
              content: [{ type: "text", text: "q", cache_control: { type: "ephemeral" } }],
            }
          : { role: "user", content: "q" },
        {
          role: "assistant",
          content: [
            {
              type: "tool_use",
              id: "t",
              name: "B",
              input: { a: 1 },
              ...(cached === 2 ? { cache_control: { type: "ephemeral" } } : {}),
            },
          ],
        },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "t",
              content: cached === 2 ? [{ type: "text", text: "r" }] : "r",
            },
          ],
        },
      ],
    });
    const texts = [0, 1, 2].map((cached) => JSON.stringify(chatOf(turn(cached)).messages));
    expect(new Set(texts).size).toBe(1);
    expect(
      chatOf({ messages: [{ role: "assistant", content: [{ type: "text", text: "x" }] }] })
        .messages,
    ).toEqual(chatOf({ messages: [{ role: "assistant", content: "x" }] }).messages);
  });

  it("translates a count_tokens body, which has no max_tokens", () => {
    const body = MessagesCountTokensRequest.parse({
      model: "m",
      messages: [{ role: "user", content: "q" }],
    });
    expect(messagesToChat(body)).toEqual({
      chat: { model: "m", messages: [{ role: "user", content: "q" }], stream: false },
      stream: false,
      requestedModel: "m",
    });
  });
});
