import { Agent, tool } from "@openai/agents";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import {
  createOpenAIAgentsModel,
  createOpenAIAgentsProvider,
  createOpenAIAgentsRunner,
} from "../../../src/integrations/openai-agents";
import { LLM, scriptedChat } from "./scripted-chat";

const add = tool({
  name: "add",
  description: "Adds two numbers.",
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => String(a + b),
});
const adder = new Agent({ name: "adder", instructions: "Add with the tool.", tools: [add] });

afterEach(() => vi.unstubAllGlobals());

describe("the @openai/agents integration (unit)", () => {
  it("runs an agent's tool loop against the rollout's base_url with its key, through the given fetch", async () => {
    const chat = scriptedChat([{ tool: "add", args: { a: 2, b: 3 } }, { text: "It is 5." }]);
    const result = await createOpenAIAgentsRunner({ ...LLM, fetch: chat.fetch }).run(
      adder,
      "What is 2 + 3?",
    );
    expect(result.finalOutput).toBe("It is 5.");
    expect(
      chat.requests.map((request) => [request.url, request.authorization, request.body.model]),
    ).toEqual([
      [`${LLM.base_url}/chat/completions`, `Bearer ${LLM.api_key}`, LLM.model],
      [`${LLM.base_url}/chat/completions`, `Bearer ${LLM.api_key}`, LLM.model],
    ]);
    expect(chat.requests[1]!.body.messages.at(-1)).toEqual({
      role: "tool",
      tool_call_id: "call_1",
      content: "5",
    });
  });

  it("sends nothing but model calls: tracing is disabled and no global fetch is used", async () => {
    const globalFetch = vi.fn(async () => new Response("{}"));
    vi.stubGlobal("fetch", globalFetch);
    const chat = scriptedChat([{ text: "Hello." }]);
    await createOpenAIAgentsRunner({ ...LLM, fetch: chat.fetch }).run(adder, "Say hello.");
    expect(chat.requests).toHaveLength(1);
    expect(globalFetch).not.toHaveBeenCalled();
  });

  it("does not retry a failed call on the client (the gateway retries upstream)", async () => {
    const chat = scriptedChat([]);
    await expect(
      createOpenAIAgentsRunner({ ...LLM, fetch: chat.fetch }).run(adder, "Say hello."),
    ).rejects.toThrow();
    expect(chat.requests).toHaveLength(1);
  });

  it("resolves every model name of the provider, and the bare model, to the rollout's model", async () => {
    const chat = scriptedChat([{ text: "a" }, { text: "b" }]);
    const named = await createOpenAIAgentsProvider({ ...LLM, fetch: chat.fetch }).getModel("gpt-5");
    const runner = createOpenAIAgentsRunner({ ...LLM, fetch: chat.fetch });
    await runner.run(new Agent({ name: "named", model: named }), "hi");
    await runner.run(
      new Agent({ name: "bare", model: createOpenAIAgentsModel({ ...LLM, fetch: chat.fetch }) }),
      "hi",
    );
    expect(chat.requests.map((request) => request.body.model)).toEqual([LLM.model, LLM.model]);
  });
});
