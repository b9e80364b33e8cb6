/**
 * The gateway end to end against each vLLM behaviour the simulator reproduces (docs/vllm.md):
 * reasoning in either field, several choices, a prefill that hands off nothing, forced tool
 * choice, completions echo, and vLLM's request validation.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CALCULATE_TOOL } from "../../../src/agents/calculator/calculate-tool";
import { InvalidInputError, ModelError } from "../../../src/errors";
import { backendRegistry, createVllmBackend } from "../../../src/gateway/backends";
import { type Gateway, type GatewayCall, createGateway } from "../../../src/gateway/gateway";
import type { UpstreamPath } from "../../../src/gateway/model-backend";
import type { JsonObject } from "../../../src/schemas/json";
import type { LlmCall } from "../../../src/schemas/llm-call";
import { type VllmSimulator, decode, startVllmSimulator } from "../../../tools/simulator";
import { ROOMY_LIMITS, depsWith } from "./backends/backend-fixtures";

const limits = ROOMY_LIMITS;
let calls = 0;
const call = (train: boolean): GatewayCall => ({
  rolloutId: "wire",
  stepId: null,
  callId: `wire/${calls++}`,
  train,
  limits,
  replicaHint: null,
  whileSyncing: "refuse",
});
const chat = (text: string, extra: JsonObject = {}): JsonObject => ({
  messages: [{ role: "user", content: text }],
  seed: 3,
  ...extra,
});
const gatewayOver = (url: string): Gateway =>
  createGateway({
    policy: null,
    backendFor: () => createVllmBackend({ baseUrl: `${url}/v1` }),
    defaultModel: "sim-qwen3",
    retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
    now: Date.now,
  });

/** A streamed call through the gateway: the relayed text and the recorded call. */
async function streamed(
  gateway: Gateway,
  path: UpstreamPath,
  body: JsonObject,
  train = true,
): Promise<{ text: string; call: LlmCall }> {
  let recorded: LlmCall | undefined;
  const response = await gateway.stream(path, body, call(train), async (c) => void (recorded = c));
  const text = await response.text();
  if (!recorded) throw new Error("stream was not recorded");
  return { text, call: recorded };
}

describe("gateway against the simulator's reasoning parser", () => {
  let sim: VllmSimulator;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, seed: 5, thinking: true, reasoningParser: true });
  });
  afterAll(() => sim.close());

  for (const field of ["reasoning", "reasoning_content", "both"] as const) {
    it(`records the thought sent in ${field}, unstreamed and streamed, and keeps it out of the content`, async () => {
      sim.configure({ compat: { reasoningField: field } });
      const gateway = gatewayOver(sim.url);
      const { reply, call: sent } = await gateway.send(
        "/chat/completions",
        chat("What is 6 * 7?"),
        call(true),
      );
      const message = (reply as { choices: Array<{ message: Record<string, unknown> }> })
        .choices[0]!.message;
      expect(
        Object.keys(message)
          .filter((key) => key.startsWith("reasoning"))
          .sort(),
      ).toEqual(field === "both" ? ["reasoning", "reasoning_content"] : [field]);
      expect(sent.response_message.reasoning_content).toBe("I need to evaluate 6 * 7.");
      expect(sent.response_message.content).not.toContain("<think>");
      const { call: streamedCall } = await streamed(
        gateway,
        "/chat/completions",
        chat("What is 6 * 7?"),
      );
      expect(streamedCall.response_message).toEqual(sent.response_message);
      expect(streamedCall.completion_token_ids).toEqual(sent.completion_token_ids);
      // The thought is part of the sampled tokens the trainer sees.
      expect(decode(sent.completion_token_ids)).toContain(
        "<think>I need to evaluate 6 * 7.</think>",
      );
    });
  }
});

describe("gateway against several choices, echo, forced tool choice and validation", () => {
  let sim: VllmSimulator;
  let gateway: Gateway;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, seed: 6 });
    gateway = gatewayOver(sim.url);
  });
  afterAll(() => sim.close());

  it("refuses n > 1 in training mode with a 422 naming n, before anything reaches the engine", async () => {
    const before = sim.stats().requests;
    const error = await gateway
      .send("/chat/completions", chat("What is 2 + 2?", { n: 4 }), call(true))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error).toMatchObject({ status: 422, details: [{ path: "n" }] });
    expect(sim.stats().requests).toBe(before);
  });

  it("passes several choices through outside training mode and records choice 0, with usage over all", async () => {
    const { reply, call: sent } = await gateway.send(
      "/chat/completions",
      chat("Say something.", { n: 3 }),
      call(false),
    );
    const body = reply as {
      choices: Array<{ index: number; token_ids: number[] }>;
      usage: { completion_tokens: number };
    };
    expect(body.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(sent.completion_token_ids).toEqual(body.choices[0]!.token_ids);
    expect(sent.usage.completion_tokens).toBe(
      body.choices.reduce((sum, c) => sum + c.token_ids.length, 0),
    );
  });

  it("records a completions call with echo: one logprob per completion token, unstreamed and streamed", async () => {
    const body = { prompt: "The answer to 6 * 7 is", max_tokens: 8, echo: true };
    const { reply, call: sent } = await gateway.send("/completions", body, call(true));
    const choice = (
      reply as {
        choices: Array<{
          logprobs: { token_logprobs: Array<number | null> };
          prompt_token_ids: number[];
        }>;
      }
    ).choices[0]!;
    expect(choice.logprobs.token_logprobs).toHaveLength(
      choice.prompt_token_ids.length + sent.completion_token_ids.length,
    );
    expect(sent.logprobs).toHaveLength(sent.completion_token_ids.length);
    expect(sent.logprobs).toEqual(
      choice.logprobs.token_logprobs.slice(choice.prompt_token_ids.length),
    );
    expect(sent.trainable).toBe(true);
    const { call: streamedCall } = await streamed(gateway, "/completions", {
      ...body,
      stream: true,
    });
    expect(streamedCall.logprobs).toHaveLength(streamedCall.completion_token_ids.length);
    expect(streamedCall.trainable).toBe(true);
  });

  it('records a named tool choice as content "" with the call, its tokens the constrained JSON', async () => {
    const body = chat("What is (3 + 4) * 5?", {
      tools: [CALCULATE_TOOL],
      tool_choice: { type: "function", function: { name: "calculate" } },
    });
    const { call: sent } = await gateway.send("/chat/completions", body, call(true));
    expect(sent.response_message.content).toBe("");
    expect(sent.response_message.tool_calls?.map((c) => c.function.name)).toEqual(["calculate"]);
    expect(JSON.parse(sent.response_message.tool_calls![0]!.function.arguments)).toEqual({
      expression: "(3 + 4) * 5",
    });
    expect(decode(sent.completion_token_ids, { skipSpecialTokens: true })).toBe(
      '{"expression":"(3 + 4) * 5"}',
    );
    expect(sent.finish_reason).toBe("stop");
    const required = await gateway.send(
      "/chat/completions",
      { ...body, tool_choice: "required" },
      call(true),
    );
    expect(required.call.finish_reason).toBe("tool_calls");
    expect(decode(required.call.completion_token_ids, { skipSpecialTokens: true })).toMatch(
      /^\[\{"name":"calculate","parameters":/,
    );
    const streamedNamed = await streamed(gateway, "/chat/completions", body);
    expect(streamedNamed.call.response_message.tool_calls?.map((c) => c.function.name)).toEqual([
      "calculate",
    ]);
    expect(streamedNamed.call.completion_token_ids).toEqual(sent.completion_token_ids);
  });

  it("omits tool_calls from a recorded answer without any, as vLLM omits the empty list", async () => {
    const { call: sent } = await gateway.send(
      "/chat/completions",
      chat("What is 2 + 3?", { tools: [CALCULATE_TOOL], tool_choice: "none" }),
      call(true),
    );
    expect(sent.response_message).not.toHaveProperty("tool_calls");
  });

  it("fails without retry on vLLM's 400 for more than 4 stop strings", async () => {
    const before = sim.stats().requests;
    const error = await gateway
      .send("/chat/completions", chat("Hi", { stop: ["a", "b", "c", "d", "e"] }), call(true))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ retryable: false, upstreamStatus: 400 });
    expect(sim.stats().requests - before).toBe(1);
  });
});

describe("gateway's vllm_pd backend when the prefill hands off nothing", () => {
  let prefill: VllmSimulator;
  let decodeSim: VllmSimulator;
  beforeAll(async () => {
    // Every reply starts with EOS on the prefill server, so its one-token prefill stops there.
    prefill = await startVllmSimulator({ port: 0, seed: 1, role: "prefill", emptyReplyRate: 1 });
    decodeSim = await startVllmSimulator({ port: 0, seed: 2, role: "decode" });
  });
  afterAll(() => Promise.all([prefill.close(), decodeSim.close()]));

  it("goes on to the decode server, which computes the prefill itself, and records a trainable call", async () => {
    const backend = backendRegistry.create(
      { name: "vllm_pd", prefill: [prefill.url], decode: [decodeSim.url] },
      depsWith(Date.now),
    );
    const gateway = createGateway({
      policy: null,
      backendFor: () => backend,
      defaultModel: "sim-qwen3",
      now: Date.now,
    });
    const before = { prefill: prefill.stats().pd, decode: decodeSim.stats().pd };
    const { call: sent } = await gateway.send(
      "/chat/completions",
      chat("What is 9 * 8?"),
      call(true),
    );
    const { call: streamedCall } = await streamed(
      gateway,
      "/chat/completions",
      chat("What is 9 * 8?"),
    );
    expect(prefill.stats().pd.prefill - before.prefill.prefill).toBe(2);
    expect(decodeSim.stats().pd.recomputed - before.decode.recomputed).toBe(2);
    expect(decodeSim.stats().pd.decode - before.decode.decode).toBe(0);
    for (const recorded of [sent, streamedCall]) {
      expect(recorded.trainable).toBe(true);
      expect(recorded.completion_token_ids.length).toBeGreaterThan(1);
    }
  });
});
