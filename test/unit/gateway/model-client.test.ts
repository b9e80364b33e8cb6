import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CALCULATE_TOOL } from "../../../src/agents/calculator/calculate-tool";
import { ModelError } from "../../../src/errors";
import { createGateway } from "../../../src/gateway/gateway";
import { type ChatInput, createModelClient } from "../../../src/gateway/model-client";
import type { RetryPolicy } from "../../../src/gateway/retry";
import type { UpstreamTimeouts } from "../../../src/gateway/upstream-timeouts";
import { createVllmBackend } from "../../../src/gateway/backends";
import { LlmCall } from "../../../src/schemas/llm-call";
import { type VllmSimulator, startVllmSimulator } from "../../../tools/simulator";

const MODEL = "sim-qwen3";
const RETRY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5 };
const input: ChatInput = {
  messages: [
    { role: "system", content: "Be brief." },
    { role: "user", content: "What is 17 * 3? Ünïcödé 🧮" },
  ],
  tools: [],
  temperature: 1,
  topP: 1,
  seed: 1234,
};
const limits = {
  max_prompt_length: 131072,
  max_response_length: 64,
  max_tokens_per_call: null,
  completion_tokens_used: 0,
  last_context_tokens: 0,
  last_context_messages: 0,
};
const context = (train = true, model: string | null = null) => ({
  rolloutId: "r-1",
  stepId: "r-1/step/0",
  callId: "r-1/step/0/call/a",
  train,
  model,
  limits,
  replicaHint: null,
});
const clientOver = (
  backend: ReturnType<typeof createVllmBackend>,
  retry: RetryPolicy,
  timeouts?: UpstreamTimeouts,
) =>
  createModelClient(
    createGateway({
      policy: null,
      backendFor: () => backend,
      defaultModel: MODEL,
      retry,
      ...(timeouts ? { timeouts } : {}),
      now: Date.now,
    }),
  );

interface DirectReply {
  prompt_token_ids: number[];
  choices: Array<{ token_ids: number[]; logprobs: { content: Array<{ logprob: number }> } }>;
}

describe("createModelClient over the gateway with the vLLM backend", () => {
  let sim: VllmSimulator;
  let chatRequests: () => number;
  const clientFor = (onFetch?: () => void) => {
    const backend = createVllmBackend({
      baseUrl: `${sim.url}/v1`,
      fetch: (url, init) => (onFetch?.(), fetch(url, init)),
    });
    return clientOver(backend, RETRY);
  };
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, seed: 9, successRate: 1 });
    chatRequests = () => sim.stats().byEndpoint["POST /v1/chat/completions"] ?? 0;
  });
  afterAll(() => sim.close());

  it("records the engine's token ids and logprobs exactly as the simulator returns them", async () => {
    const { call } = await clientFor().chat(input, context());
    const body = {
      model: MODEL,
      messages: input.messages,
      max_tokens: 64,
      temperature: 1,
      top_p: 1,
      seed: 1234,
      return_token_ids: true,
      logprobs: true,
      top_logprobs: 0,
    };
    const direct = (await (
      await fetch(`${sim.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      })
    ).json()) as DirectReply;
    const choice = direct.choices[0]!;
    expect(call.prompt_token_ids).toEqual(direct.prompt_token_ids);
    expect(call.completion_token_ids).toEqual(choice.token_ids);
    expect(call.logprobs).toEqual(choice.logprobs.content.map((entry) => entry.logprob));
    expect(call.completion_token_ids.length).toBeGreaterThan(0);
    expect(call).toMatchObject({
      trainable: true,
      logprobs_mode: "raw_logprobs",
      attempts: 1,
      backend: "vllm",
      replica: `${sim.url}/v1`,
    });
    expect(call.usage).toEqual({
      prompt_tokens: direct.prompt_token_ids.length,
      completion_tokens: choice.token_ids.length,
      total_tokens: direct.prompt_token_ids.length + choice.token_ids.length,
    });
    expect(() => LlmCall.parse(call)).not.toThrow();
  });

  it("keeps the request it sent and asks for logprobs only in train mode", async () => {
    const client = clientFor();
    const train = (await client.chat(input, context(true))).call;
    const val = (await client.chat({ ...input, seed: null }, context(false))).call;
    expect(train.request).toEqual({
      model: MODEL,
      messages: input.messages,
      max_tokens: 64,
      temperature: 1,
      top_p: 1,
      seed: 1234,
      stream: false,
      return_token_ids: true,
      logprobs: true,
      top_logprobs: 0,
    });
    expect(val.request).toEqual({
      model: MODEL,
      messages: input.messages,
      max_tokens: 64,
      temperature: 1,
      top_p: 1,
      stream: false,
      return_token_ids: true,
    });
    expect(val).toMatchObject({ logprobs: [], logprobs_mode: "none", trainable: false });
    expect(val.completion_token_ids.length).toBeGreaterThan(0);
    expect(train).toMatchObject({
      call_id: "r-1/step/0/call/a",
      rollout_id: "r-1",
      step_id: "r-1/step/0",
    });
  });

  it("sends tools only when there are some and hands tool calls to the agent", async () => {
    const client = clientFor();
    const plain = await client.chat(input, context());
    const withTools = await client.chat({ ...input, tools: [CALCULATE_TOOL] }, context());
    expect(plain.call.request).not.toHaveProperty("tools");
    expect(withTools.call.request.tools).toEqual([CALCULATE_TOOL]);
    const { response } = withTools;
    expect(response.toolCalls.map((call) => call.function.name)).toEqual(["calculate"]);
    expect(JSON.parse(response.toolCalls[0]!.function.arguments)).toEqual({ expression: "17 * 3" });
    expect(response).toMatchObject({
      text: "",
      finishReason: "tool_calls",
      message: { role: "assistant", content: null, tool_calls: response.toolCalls },
    });
  });

  it("retries a 5xx or a malformed reply and succeeds on the next attempt", async () => {
    for (const faults of [{ rate5xx: 1 }, { rateMalformed: 1 }]) {
      sim.configure({ faults });
      let fetches = 0;
      const client = clientFor(() => {
        if (++fetches === 2) sim.configure({ faults: { rate5xx: 0, rateMalformed: 0 } });
      });
      const { call } = await client.chat(input, context());
      expect(call.attempts, JSON.stringify(faults)).toBe(2);
      expect(() => LlmCall.parse(call)).not.toThrow();
    }
  });

  it("gives up a hung connection at the attempt's deadline and gets the call through on a fresh one", async () => {
    sim.configure({ faults: { rateTimeout: 1, hangMs: 60_000 } });
    let fetches = 0;
    const backend = createVllmBackend({
      baseUrl: `${sim.url}/v1`,
      fetch: (url, init) => {
        if (++fetches === 2) sim.configure({ faults: { rateTimeout: 0 } });
        return fetch(url, init);
      },
    });
    // The hung attempt hangs 60 s, so any deadline far below that proves it is given up; 200 ms also
    // cut the healthy second attempt at load 9 (3 attempts), so the deadline leaves it room.
    const client = clientOver(backend, RETRY, { firstByteMs: 1_500, msPerToken: 0 });
    const { call } = await client.chat(input, context());
    expect(call.attempts).toBe(2);
    expect(sim.stats().faults.timeout).toBeGreaterThanOrEqual(1);
  });

  it("ends in a retryable ModelError after exactly maxAttempts failed attempts", async () => {
    const before = { requests: chatRequests(), faults: sim.stats().faults["5xx"] };
    sim.configure({ faults: { rate5xx: 1 } });
    const error = await clientFor()
      .chat(input, context())
      .catch((e: unknown) => e);
    sim.configure({ faults: { rate5xx: 0 } });
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ retryable: true, upstreamStatus: 500 });
    expect(chatRequests() - before.requests).toBe(RETRY.maxAttempts);
    expect(sim.stats().faults["5xx"] - before.faults).toBe(RETRY.maxAttempts);
  });

  it("does not retry an unknown model and passes on the upstream message", async () => {
    const before = chatRequests();
    const error = await clientFor()
      .chat(input, context(true, "gpt-nope"))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ retryable: false, upstreamStatus: 404 });
    expect((error as ModelError).message).toContain("The model `gpt-nope` does not exist.");
    expect(chatRequests() - before).toBe(1);
  });
});

describe("createModelClient under a partial fault rate", () => {
  it("gets every call through within the attempt budget and counts each retry", async () => {
    const sim = await startVllmSimulator({
      port: 0,
      seed: 21,
      faults: { rate5xx: 0.3, rateMalformed: 0.2 },
    });
    // At a 50% fault rate, 8 attempts all failing has probability 1/256 per call; the seed fixes the draws.
    const client = clientOver(createVllmBackend({ baseUrl: `${sim.url}/v1` }), {
      maxAttempts: 8,
      baseDelayMs: 1,
      maxDelayMs: 2,
    });
    const calls = [];
    for (let i = 0; i < 6; i++)
      calls.push(LlmCall.parse((await client.chat(input, context())).call));
    const stats = sim.stats();
    await sim.close();
    const retries = calls.reduce((total, call) => total + call.attempts - 1, 0);
    expect(retries).toBe(stats.faults["5xx"] + stats.faults.malformed);
    expect(retries).toBeGreaterThan(0);
    expect(calls.every((call) => call.trainable)).toBe(true);
  });
});
