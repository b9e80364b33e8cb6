import OpenAI from "openai";
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionCreateParamsStreaming,
} from "openai/resources/chat/completions";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EOS_TOKEN_ID, type VllmSimulator, startVllmSimulator } from "../../../tools/simulator";
import { CALCULATOR_TOOL } from "./simulator-fixtures";

/** vLLM's extra request field, sent as-is by the client (it does not validate bodies). */
type WithTokenIds<T> = T & { return_token_ids: boolean };
type VllmCompletion = ChatCompletion & {
  prompt_token_ids: number[];
  choices: Array<ChatCompletion.Choice & { token_ids: number[] }>;
};
type VllmChunk = ChatCompletionChunk & {
  prompt_token_ids?: number[] | null;
  choices: Array<ChatCompletionChunk.Choice & { token_ids?: number[] | null }>;
};

describe("the openai npm client against the simulator", () => {
  let sim: VllmSimulator;
  let client: OpenAI;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, successRate: 1 });
    client = new OpenAI({ baseURL: `${sim.url}/v1`, apiKey: "unused", maxRetries: 0 });
  });
  afterAll(() => sim.close());

  it("reads a non-stream completion and vLLM's extra token-id fields", async () => {
    const params: WithTokenIds<ChatCompletionCreateParamsNonStreaming> = {
      model: "sim-qwen3",
      messages: [{ role: "user", content: "What is 8 * 8?" }],
      return_token_ids: true,
    };
    const completion = (await client.chat.completions.create(params)) as VllmCompletion;
    expect(completion.choices[0]?.message.content).toContain("\\boxed{64}");
    expect(completion.prompt_token_ids.length).toBe(completion.usage?.prompt_tokens);
    expect(completion.choices[0]?.token_ids.at(-1)).toBe(EOS_TOKEN_ID);
  });

  it("iterates a stream and reassembles content and token ids", async () => {
    const params: WithTokenIds<ChatCompletionCreateParamsStreaming> = {
      model: "sim-qwen3",
      messages: [{ role: "user", content: "What is 8 * 8?" }],
      stream: true,
      stream_options: { include_usage: true },
      return_token_ids: true,
    };
    let content = "";
    const tokenIds: number[] = [];
    let promptIds: number[] | undefined;
    for await (const chunk of (await client.chat.completions.create(
      params,
    )) as AsyncIterable<VllmChunk>) {
      promptIds ??= chunk.prompt_token_ids ?? undefined;
      content += chunk.choices[0]?.delta.content ?? "";
      tokenIds.push(...(chunk.choices[0]?.token_ids ?? []));
    }
    expect(content).toContain("\\boxed{64}");
    expect(promptIds?.length).toBeGreaterThan(0);
    expect(tokenIds.at(-1)).toBe(EOS_TOKEN_ID);
  });

  it("gets tool calls, streamed or not, that round-trip through the next request", async () => {
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      { role: "user", content: "Compute 21 * 2 please" },
    ];
    const tools = [CALCULATOR_TOOL] as unknown as OpenAI.ChatCompletionTool[];
    const first = await client.chat.completions.create({ model: "sim-qwen3", messages, tools });
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe("tool_calls");
    expect(call?.type === "function" && JSON.parse(call.function.arguments)).toEqual({
      expression: "21 * 2",
    });

    const stream = client.chat.completions.stream({ model: "sim-qwen3", messages, tools });
    const streamed = await stream.finalChatCompletion();
    const streamedCall = streamed.choices[0]?.message.tool_calls?.[0];
    expect(
      streamedCall?.type === "function" && JSON.parse(streamedCall.function.arguments),
    ).toEqual({ expression: "21 * 2" });

    messages.push(first.choices[0]?.message as OpenAI.ChatCompletionMessageParam, {
      role: "tool",
      tool_call_id: call?.id ?? "",
      content: "42",
    });
    const answer = await client.chat.completions.create({ model: "sim-qwen3", messages, tools });
    expect(answer.choices[0]?.message.content).toBe("The result is \\boxed{42}.");
  });

  it("surfaces vLLM's error body through the client's APIError", async () => {
    const error = await client.chat.completions
      .create({ model: "nope", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as InstanceType<typeof OpenAI.NotFoundError>).message).toContain(
      "The model `nope` does not exist.",
    );
  });
});
