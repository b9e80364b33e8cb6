import { describe, expect, it } from "vitest";
import { MATH_SYSTEM_PROMPT, MathAgent } from "../../../../src/agents/math/math-agent";

describe("MathAgent", () => {
  it("sends the system prompt and the problem, and offers no tools", () => {
    const agent = new MathAgent();
    agent.reset();
    agent.updateFromEnv("What is 6 * 7?");
    agent.updateFromEnv("");
    expect(agent.chatCompletions).toEqual([
      { role: "system", content: MATH_SYSTEM_PROMPT },
      { role: "user", content: "What is 6 * 7?" },
    ]);
    expect(agent.tools).toEqual([]);
  });

  it("answers with the model's text and keeps the assistant message", () => {
    const agent = new MathAgent();
    agent.reset();
    agent.updateFromEnv("What is 6 * 7?");
    const message = { role: "assistant" as const, content: "\\boxed{42}" };
    expect(
      agent.updateFromModel({
        message,
        text: "\\boxed{42}",
        toolCalls: [],
        finishReason: "stop",
        thought: "",
        action: null,
      }),
    ).toEqual({ action: "\\boxed{42}" });
    expect(agent.chatCompletions.at(-1)).toBe(message);
    agent.reset();
    expect(agent.chatCompletions).toHaveLength(1);
  });
});
