import { describe, expect, it } from "vitest";
import {
  EOS_TOKEN_ID,
  decode,
  encode,
  parseHermesOutput,
  renderAssistantBody,
  renderChatPrompt,
} from "../../../tools/simulator";
import { CALCULATOR_TOOL } from "./simulator-fixtures";

describe("simulator chat template", () => {
  it("renders ChatML with tools in the system turn and tool results as user turns", () => {
    const ids = renderChatPrompt(
      [
        { role: "system", content: "Be brief." },
        { role: "user", content: [{ type: "text", text: "What is 2+3?" }] },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "c1",
              type: "function",
              function: { name: "calculate", arguments: '{"expression": "2+3"}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "c1", content: "5" },
      ],
      { tools: [CALCULATOR_TOOL] },
    );
    const text = decode(ids);
    expect(text.startsWith("<|im_start|>system\nBe brief.\n\n# Tools\n")).toBe(true);
    expect(text).toContain('"name":"calculate"');
    expect(text).toContain(
      '<|im_start|>assistant\n<tool_call>\n{"name":"calculate","arguments":{"expression":"2+3"}}\n</tool_call><|im_end|>\n',
    );
    expect(
      text.endsWith(
        "<|im_start|>user\n<tool_response>\n5\n</tool_response><|im_end|>\n<|im_start|>assistant\n",
      ),
    ).toBe(true);
  });

  it("creates a system turn for tools when the chat has none", () => {
    const text = decode(
      renderChatPrompt([{ role: "user", content: "hi" }], { tools: [CALCULATOR_TOOL] }),
    );
    expect(text.startsWith("<|im_start|>system\n# Tools\n")).toBe(true);
  });

  it("tokenizes pieces separately so boundaries never merge", () => {
    const ids = renderChatPrompt([{ role: "user", content: "the" }], {
      addGenerationPrompt: false,
    });
    expect(ids).toEqual([1, ...encode("user\n"), ...encode("the"), EOS_TOKEN_ID, ...encode("\n")]);
  });

  it("renders an assistant message back to the ids its raw text came from", () => {
    const call = { name: "calculate", arguments: { expression: "7 * 6" } };
    const body = renderAssistantBody("<think>use the tool</think>\n", [call]);
    const parsed = parseHermesOutput(decode(body));
    expect(parsed).toEqual({ content: "<think>use the tool</think>\n", toolCalls: [call] });
    expect(renderAssistantBody(parsed.content ?? "", parsed.toolCalls)).toEqual(body);
  });

  it("drops <think> from history only in strip mode", () => {
    const messages = [
      { role: "user" as const, content: "q" },
      { role: "assistant" as const, content: "<think>why</think>\nanswer" },
    ];
    expect(decode(renderChatPrompt(messages))).toContain("<think>why</think>\nanswer");
    expect(decode(renderChatPrompt(messages, { stripThinkInHistory: true }))).toContain(
      "<|im_start|>assistant\nanswer<|im_end|>",
    );
  });
});
