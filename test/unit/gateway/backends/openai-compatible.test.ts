import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backendRegistry, toPlainOpenAiBody } from "../../../../src/gateway/backends";
import { createGateway } from "../../../../src/gateway/gateway";
import { createModelClient } from "../../../../src/gateway/model-client";
import { LlmCall } from "../../../../src/schemas/llm-call";
import { type VllmSimulator, startVllmSimulator } from "../../../../tools/simulator";
import { chatBody, depsWith, modelFailure, startScriptedUpstream } from "./backend-fixtures";

const deps = depsWith(Date.now);
const COMPLETION = {
  id: "c",
  object: "chat.completion",
  model: "gpt-x",
  choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }],
};

describe("openai backend", () => {
  let sim: VllmSimulator;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, seed: 3, successRate: 1 });
  });
  afterAll(() => sim.close());

  it("sends a body a plain OpenAI server accepts: no vLLM extensions, no logprobs, no reasoning_content", async () => {
    const upstream = await startScriptedUpstream({ status: 200, body: JSON.stringify(COMPLETION) });
    const backend = backendRegistry.create(
      { name: "openai", base_url: `${upstream.url}/v1/`, api_key: "sk-test" },
      deps,
    );
    const body = chatBody("hi", {
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello", reasoning_content: "greet back" },
        { role: "user", content: "again" },
      ],
      kv_transfer_params: { do_remote_decode: true },
      top_k: 20,
      stream_options: { include_usage: true, continuous_usage_stats: true },
    });
    const reply = await backend.request("/chat/completions", body, { rolloutId: "r" });
    await upstream.close();
    expect(reply).toEqual({
      body: COMPLETION,
      text: JSON.stringify(COMPLETION),
      replica: `${upstream.url}/v1`,
    });
    expect(upstream.seen[0]!.url).toBe("/v1/chat/completions");
    expect(upstream.seen[0]!.headers.authorization).toBe("Bearer sk-test");
    expect(upstream.seen[0]!.body).toEqual({
      model: "sim-qwen3",
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello" },
        { role: "user", content: "again" },
      ],
      max_tokens: 24,
      temperature: 1,
      top_p: 1,
      seed: 11,
      stream_options: { include_usage: true },
    });
  });

  it("leaves a body without vLLM fields as it is", () => {
    const plain = {
      model: "m",
      messages: [{ role: "user", content: "x" }],
      max_tokens: 5,
      tools: [],
    };
    expect(toPlainOpenAiBody(plain)).toEqual(plain);
  });

  it("is recorded as untrainable through the model client, even in train mode", async () => {
    const backend = backendRegistry.create({ name: "openai", base_url: `${sim.url}/v1` }, deps);
    const retry = { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 };
    const client = createModelClient(
      createGateway({
        policy: null,
        backendFor: () => backend,
        defaultModel: "sim-qwen3",
        retry,
        now: Date.now,
      }),
    );
    const input = {
      messages: [{ role: "user" as const, content: "What is 3 + 4?" }],
      tools: [],
      temperature: 1,
      topP: 1,
      seed: 5,
    };
    const limits = {
      max_prompt_length: 4096,
      max_response_length: 64,
      max_tokens_per_call: null,
      completion_tokens_used: 0,
      last_context_tokens: 0,
      last_context_messages: 0,
    };
    const { call, response } = await client.chat(input, {
      rolloutId: "r",
      stepId: null,
      callId: "c-1",
      train: true,
      limits,
      replicaHint: null,
    });
    expect(response.text.length).toBeGreaterThan(0);
    expect(call).toMatchObject({
      backend: "openai",
      replica: `${sim.url}/v1`,
      trainable: false,
      prompt_token_ids: [],
      completion_token_ids: [],
      logprobs: [],
      logprobs_mode: "none",
    });
    expect(() => LlmCall.parse(call)).not.toThrow();
  });

  it("maps upstream refusals by status: 401 final, 429 retryable", async () => {
    for (const [status, retryable] of [
      [401, false],
      [429, true],
    ] as const) {
      const upstream = await startScriptedUpstream({
        status,
        body: '{"error": {"message": "nope"}}',
      });
      const backend = backendRegistry.create({ name: "openai", base_url: upstream.url }, deps);
      const error = await modelFailure(
        backend.openStream("/chat/completions", chatBody("x", { stream: true }), {
          rolloutId: "r",
        }),
      );
      await upstream.close();
      expect(error).toMatchObject({ retryable, upstreamStatus: status });
    }
  });
});
