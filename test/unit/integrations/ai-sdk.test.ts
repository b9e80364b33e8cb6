import { generateText, stepCountIs, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createAiSdkModel, createAiSdkProvider } from "../../../src/integrations/ai-sdk";
import { LLM, scriptedChat } from "./scripted-chat";

const add = tool({
  description: "Adds two numbers.",
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => String(a + b),
});

describe("the Vercel AI SDK integration (unit)", () => {
  it("runs generateText's tool steps against the rollout's base_url with its key, through the given fetch", async () => {
    const chat = scriptedChat([{ tool: "add", args: { a: 2, b: 3 } }, { text: "It is 5." }]);
    const result = await generateText({
      model: createAiSdkModel({ ...LLM, fetch: chat.fetch }),
      prompt: "What is 2 + 3?",
      tools: { add },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    expect(result.text).toBe("It is 5.");
    expect(result.steps).toHaveLength(2);
    expect(
      chat.requests.map((request) => [request.url, request.authorization, request.body.model]),
    ).toEqual([
      [`${LLM.base_url}/chat/completions`, `Bearer ${LLM.api_key}`, LLM.model],
      [`${LLM.base_url}/chat/completions`, `Bearer ${LLM.api_key}`, LLM.model],
    ]);
    expect(chat.requests[0]!.body.tools?.map((offered) => offered.function.name)).toEqual(["add"]);
    expect(chat.requests[1]!.body.messages.at(-1)).toEqual({
      role: "tool",
      tool_call_id: "call_1",
      content: "5",
    });
  });

  it("names the provider edge-rollout unless told otherwise", () => {
    expect(createAiSdkModel(LLM)).toMatchObject({
      provider: "edge-rollout.chat",
      modelId: LLM.model,
    });
    expect(createAiSdkProvider(LLM, { name: "mine" }).chatModel("m")).toMatchObject({
      provider: "mine.chat",
      modelId: "m",
    });
  });
});
