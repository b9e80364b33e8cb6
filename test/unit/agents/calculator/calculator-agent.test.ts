import { describe, expect, it } from "vitest";
import { CALCULATE_TOOL } from "../../../../src/agents/calculator/calculate-tool";
import {
  CALCULATOR_SYSTEM_PROMPT,
  CalculatorAgent,
} from "../../../../src/agents/calculator/calculator-agent";
import type { ModelResponse } from "../../../../src/sdk/model-response";

const toolCallResponse: ModelResponse = {
  message: {
    role: "assistant",
    content: null,
    tool_calls: [
      {
        id: "call_1",
        type: "function",
        function: { name: "calculate", arguments: '{"expression": "2 + 2"}' },
      },
    ],
  },
  text: "",
  toolCalls: [
    {
      id: "call_1",
      type: "function",
      function: { name: "calculate", arguments: '{"expression": "2 + 2"}' },
    },
  ],
  finishReason: "tool_calls",
  thought: "",
  action: [{ name: "calculate", arguments: { expression: "2 + 2" } }],
};

function startedAgent(): CalculatorAgent {
  const agent = new CalculatorAgent();
  agent.reset();
  agent.updateFromEnv("What is 2 + 2?");
  return agent;
}

describe("CalculatorAgent", () => {
  it("starts from the system prompt, adds the problem as a user message and offers calculate", () => {
    const agent = startedAgent();
    agent.updateFromEnv("");
    expect(agent.chatCompletions).toEqual([
      { role: "system", content: CALCULATOR_SYSTEM_PROMPT },
      { role: "user", content: "What is 2 + 2?" },
    ]);
    expect(agent.tools).toEqual([CALCULATE_TOOL]);
  });

  it("turns model tool calls into a tool_calls action and keeps the assistant message", () => {
    const agent = startedAgent();
    const action = agent.updateFromModel(toolCallResponse);
    expect(action).toEqual({
      action: {
        tool_calls: [{ id: "call_1", name: "calculate", arguments: '{"expression": "2 + 2"}' }],
      },
    });
    expect(agent.chatCompletions.at(-1)).toBe(toolCallResponse.message);
  });

  it("turns tool results into tool messages with the matching tool_call_id", () => {
    const agent = startedAgent();
    agent.updateFromModel(toolCallResponse);
    agent.updateFromEnv({
      tool_results: [{ tool_call_id: "call_1", name: "calculate", content: "4" }],
    });
    expect(agent.chatCompletions.at(-1)).toEqual({
      role: "tool",
      tool_call_id: "call_1",
      content: "4",
    });
    expect(agent.chatCompletions).toHaveLength(4);
  });

  it("turns a plain text response into an answer action", () => {
    const agent = startedAgent();
    const response: ModelResponse = {
      message: { role: "assistant", content: "\\boxed{4}" },
      text: "\\boxed{4}",
      toolCalls: [],
      finishReason: "stop",
      thought: "",
      action: null,
    };
    expect(agent.updateFromModel(response)).toEqual({ action: { answer: "\\boxed{4}" } });
  });

  it("forgets the previous episode on reset", () => {
    const agent = startedAgent();
    agent.updateFromModel(toolCallResponse);
    agent.reset();
    expect(agent.chatCompletions).toEqual([{ role: "system", content: CALCULATOR_SYSTEM_PROMPT }]);
  });
});
