import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CALCULATE_TOOL } from "../../../src/agents/calculator/calculate-tool";
import { maxTokensForNextCall, promptTokenUpperBound } from "../../../src/gateway/prompt-budget";
import type { ChatMessage, ToolDefinition } from "../../../src/schemas/chat";
import { RolloutConfig } from "../../../src/schemas/rollout-config";
import { type VllmSimulator, startVllmSimulator } from "../../../tools/simulator";

interface Turn {
  promptTokens: number;
  contextTokens: number;
  message: ChatMessage;
}

const FRESH = { contextTokens: 0, contextMessages: 0 };
const UNICODE =
  'Ünïcödé «quotes» "escaped"\n\ttabs, 日本語のテキスト, emoji 🧮🚀👩‍👩‍👧, math ∑∫√, RTL עברית, zero-width \u200b, combining e\u0301.';

describe("promptTokenUpperBound against the simulator's real prompt lengths", () => {
  let sim: VllmSimulator;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, seed: 11, successRate: 1 });
  });
  afterAll(() => sim.close());

  /** One real call: the engine's own prompt length, and prompt + completion as the driver records it. */
  async function call(
    messages: ChatMessage[],
    tools: ToolDefinition[],
    maxTokens = 256,
  ): Promise<Turn> {
    const body = {
      messages,
      ...(tools.length ? { tools } : {}),
      max_tokens: maxTokens,
      seed: 3,
      return_token_ids: true,
    };
    const response = await fetch(`${sim.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    const reply = (await response.json()) as {
      prompt_token_ids: number[];
      choices: Array<{
        token_ids: number[];
        message: { content: string | null; tool_calls: ChatMessage["tool_calls"] };
      }>;
    };
    const choice = reply.choices[0]!;
    const message: ChatMessage = { role: "assistant", content: choice.message.content };
    if (choice.message.tool_calls?.length) message.tool_calls = choice.message.tool_calls;
    return {
      promptTokens: reply.prompt_token_ids.length,
      contextTokens: reply.prompt_token_ids.length + choice.token_ids.length,
      message,
    };
  }

  it("bounds a first prompt without tools, unicode included", async () => {
    const messages: ChatMessage[] = [
      { role: "system", content: `You are terse. ${UNICODE}` },
      { role: "user", content: `${UNICODE} What is 12 + 30?` },
    ];
    const { promptTokens } = await call(messages, []);
    expect(promptTokenUpperBound(messages, [], FRESH)).toBeGreaterThanOrEqual(promptTokens);
  });

  it("bounds a first prompt with tools, with and without a system message", async () => {
    const user: ChatMessage = { role: "user", content: "What is (17 + 25) * 3?" };
    for (const messages of [
      [user],
      [{ role: "system", content: "Use tools." } as ChatMessage, user],
    ]) {
      const { promptTokens } = await call(messages, [CALCULATE_TOOL]);
      expect(promptTokenUpperBound(messages, [CALCULATE_TOOL], FRESH)).toBeGreaterThanOrEqual(
        promptTokens,
      );
    }
  });

  it("bounds every turn of a tool-using conversation when continuing from the last context", async () => {
    const tools = [CALCULATE_TOOL];
    const messages: ChatMessage[] = [
      { role: "system", content: "Use the calculator." },
      { role: "user", content: `${UNICODE} What is (17 + 25) * 3?` },
    ];
    let last = FRESH;
    let toolCalls = 0;
    for (const toolResult of [`126 ${UNICODE}`, "126"]) {
      const turn = await call(messages, tools);
      expect(promptTokenUpperBound(messages, tools, last)).toBeGreaterThanOrEqual(
        turn.promptTokens,
      );
      messages.push(turn.message);
      toolCalls += turn.message.tool_calls?.length ?? 0;
      last = { contextTokens: turn.contextTokens, contextMessages: messages.length };
      const id = turn.message.tool_calls?.[0]?.id ?? "call_missing";
      messages.push(
        { role: "tool", tool_call_id: id, content: toolResult },
        { role: "user", content: `Check it again. ${UNICODE}` },
      );
    }
    const final = await call(messages, tools);
    expect(toolCalls).toBeGreaterThan(0);
    expect(promptTokenUpperBound(messages, tools, last)).toBeGreaterThanOrEqual(final.promptTokens);
    expect(promptTokenUpperBound(messages, tools, FRESH)).toBeGreaterThanOrEqual(
      final.promptTokens,
    );
  });

  it("bounds the next prompt after a completion cut off by max_tokens", async () => {
    const messages: ChatMessage[] = [
      { role: "user", content: "Tell me something about the weather 🌦️ today." },
    ];
    const turn = await call(messages, [], 3);
    messages.push(turn.message, { role: "user", content: "Go on, ünïcödé." });
    const next = await call(messages, []);
    expect(
      promptTokenUpperBound(messages, [], {
        contextTokens: turn.contextTokens,
        contextMessages: 2,
      }),
    ).toBeGreaterThanOrEqual(next.promptTokens);
  });
});

describe("promptTokenUpperBound", () => {
  it("continues from the last context instead of recounting earlier messages", () => {
    const long: ChatMessage = { role: "user", content: "x".repeat(10_000) };
    const messages: ChatMessage[] = [
      long,
      { role: "assistant", content: "ok" },
      { role: "user", content: "next" },
    ];
    const fresh = promptTokenUpperBound(messages, [], FRESH);
    const continued = promptTokenUpperBound(messages, [], {
      contextTokens: 100,
      contextMessages: 2,
    });
    expect(fresh).toBeGreaterThan(10_000);
    expect(continued).toBeGreaterThan(100);
    expect(continued).toBeLessThan(100 + 200);
  });

  it("starts over when the conversation is shorter than the last context", () => {
    const messages: ChatMessage[] = [{ role: "user", content: "hello" }];
    expect(promptTokenUpperBound(messages, [], { contextTokens: 50_000, contextMessages: 3 })).toBe(
      promptTokenUpperBound(messages, [], FRESH),
    );
  });
});

describe("maxTokensForNextCall", () => {
  it("gives the remaining response budget when there is no per-call cap", () => {
    const config = RolloutConfig.parse({ max_response_length: 1000 });
    expect(maxTokensForNextCall(config, 0)).toBe(1000);
    expect(maxTokensForNextCall(config, 999)).toBe(1);
  });

  it("clamps to max_tokens_per_call and to what remains, whichever is smaller", () => {
    const config = RolloutConfig.parse({ max_response_length: 1000, max_tokens_per_call: 300 });
    expect(maxTokensForNextCall(config, 0)).toBe(300);
    expect(maxTokensForNextCall(config, 800)).toBe(200);
  });

  it("is 0 once the budget is spent or overspent", () => {
    const config = RolloutConfig.parse({ max_response_length: 1000, max_tokens_per_call: 300 });
    expect(maxTokensForNextCall(config, 1000)).toBe(0);
    expect(maxTokensForNextCall(config, 1500)).toBe(0);
  });
});
