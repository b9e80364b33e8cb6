import { describe, expect, it } from "vitest";
import { thoughtOf, toolCallAction } from "../../../src/sdk/reply-parts";

describe("thoughtOf", () => {
  it("prefers the reasoning the server split off", () => {
    expect(
      thoughtOf({
        role: "assistant",
        content: "<think>ignored</think>4",
        reasoning_content: "add 3 and 1",
      }),
    ).toBe("add 3 and 1");
  });

  it("reads the <think> block of the content when the server returned no separate reasoning", () => {
    expect(
      thoughtOf({ role: "assistant", content: "<think>\n3 + 1 = 4\n</think>\n\\boxed{4}" }),
    ).toBe("3 + 1 = 4");
    // Qwen3's template may open the block in the prompt: only the closing tag is generated.
    expect(thoughtOf({ role: "assistant", content: "3 + 1 = 4</think>\\boxed{4}" })).toBe(
      "3 + 1 = 4",
    );
    expect(thoughtOf({ role: "assistant", content: "\\boxed{4}" })).toBe("");
  });
});

describe("toolCallAction", () => {
  it("takes the server's parsed tool calls, arguments as JSON", () => {
    const message = {
      role: "assistant" as const,
      content: null,
      tool_calls: [
        {
          id: "c1",
          type: "function" as const,
          function: { name: "calculate", arguments: '{"expression": "2 + 2"}' },
        },
      ],
    };
    expect(toolCallAction(message)).toEqual([
      { name: "calculate", arguments: { expression: "2 + 2" } },
    ]);
  });

  it("parses <tool_call> blocks left in the content when the server ran no tool parser", () => {
    const content =
      '<think>use the tool</think>\n<tool_call>\n{"name": "calculate", "arguments": {"expression": "6 * 7"}}\n</tool_call>\n<tool_call>not json</tool_call>';
    expect(toolCallAction({ role: "assistant", content })).toEqual([
      { name: "calculate", arguments: { expression: "6 * 7" } },
      "not json",
    ]);
    expect(toolCallAction({ role: "assistant", content: "\\boxed{42}" })).toBeNull();
  });
});
