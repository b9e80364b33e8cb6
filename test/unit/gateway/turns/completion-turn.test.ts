import { describe, expect, it } from "vitest";
import { parseCompletionTurn } from "../../../../src/gateway/turns/completion-turn";

const idOf = (i: number) => `call_x_${i}`;

describe("parseCompletionTurn", () => {
  it("splits reasoning, content and hermes tool calls as vLLM's qwen3 and hermes parsers do", () => {
    const text =
      '<think>\nI will run it.\n</think>\n\nRunning.\n<tool_call>\n{"name": "Bash", "arguments": {"command": "ls"}}\n</tool_call>';
    expect(parseCompletionTurn(text, "stop", idOf)).toEqual({
      message: {
        role: "assistant",
        content: "Running.",
        reasoning_content: "I will run it.",
        tool_calls: [
          {
            id: "call_x_0",
            type: "function",
            function: { name: "Bash", arguments: '{"command":"ls"}' },
          },
        ],
      },
      finish_reason: "tool_calls",
    });
  });

  it("leaves a tool call whose JSON the policy got wrong in the text", () => {
    const text = '<tool_call>\n{"name": "Bash", "arguments": {"command": \n</tool_call>';
    const turn = parseCompletionTurn(text, "stop", idOf);
    expect(turn.message.content).toBe(text);
    expect(turn.message.tool_calls).toBeUndefined();
    expect(turn.finish_reason).toBe("stop");
  });

  it("keeps a plain answer as content and the completion's finish reason", () => {
    expect(parseCompletionTurn("Done.", "length", idOf)).toEqual({
      message: { role: "assistant", content: "Done." },
      finish_reason: "length",
    });
  });
});
