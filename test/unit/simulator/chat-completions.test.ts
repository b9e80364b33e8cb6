import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  EOS_TOKEN_ID,
  type VllmSimulator,
  decode,
  startVllmSimulator,
} from "../../../tools/simulator";
import { CALCULATOR_TOOL, jsonChunks, postJson, postSse } from "./simulator-fixtures";

const QUESTION = [{ role: "user", content: "What is 12 * (3 + 4)?" }];

describe("POST /v1/chat/completions", () => {
  let sim: VllmSimulator;
  let url: string;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, maxModelLen: 4096 });
    url = `${sim.url}/v1/chat/completions`;
  });
  afterAll(() => sim.close());

  it("answers in vLLM's non-stream shape with token ids when asked", async () => {
    const { status, body } = await postJson(url, {
      model: "sim-qwen3",
      messages: QUESTION,
      return_token_ids: true,
      seed: 1,
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      object: "chat.completion",
      model: "sim-qwen3",
      prompt_logprobs: null,
      kv_transfer_params: null,
    });
    expect(body.id).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    const choice = body.choices[0];
    expect(choice).toMatchObject({
      index: 0,
      finish_reason: "stop",
      stop_reason: null,
      logprobs: null,
    });
    // Current vLLM: no empty tool_calls list (PR #44105), `reasoning` only (PR #33402).
    expect(choice.message).toMatchObject({ role: "assistant", reasoning: null });
    expect(choice.message).not.toHaveProperty("tool_calls");
    expect(choice.message).not.toHaveProperty("reasoning_content");
    expect(choice.message.content).toMatch(/\\boxed\{-?\d+\}$/);
    expect(choice.token_ids.at(-1)).toBe(EOS_TOKEN_ID);
    expect(decode(choice.token_ids, { skipSpecialTokens: true })).toBe(choice.message.content);
    expect(body.usage).toMatchObject({
      prompt_tokens: body.prompt_token_ids.length,
      completion_tokens: choice.token_ids.length,
    });
  });

  it("generates to max_tokens past EOS with ignore_eos, as vLLM does", async () => {
    const request = {
      messages: QUESTION,
      return_token_ids: true,
      logprobs: true,
      seed: 2,
      max_tokens: 300,
    };
    const ignoring = (await postJson(url, { ...request, ignore_eos: true })).body.choices[0];
    const normal = (await postJson(url, request)).body.choices[0];
    expect(normal.token_ids.length).toBeLessThan(300);
    expect(ignoring.finish_reason).toBe("length");
    expect(ignoring.token_ids).toHaveLength(300);
    expect(ignoring.token_ids).not.toContain(EOS_TOKEN_ID);
    expect(ignoring.logprobs.content).toHaveLength(300);
  });

  it("omits token ids unless return_token_ids is set", async () => {
    const { body } = await postJson(url, { messages: QUESTION });
    expect(body.prompt_token_ids).toBeNull();
    expect(body.choices[0].token_ids).toBeNull();
  });

  it("streams role, per-token deltas and a final finish_reason that reassemble the non-stream answer", async () => {
    const request = { messages: QUESTION, return_token_ids: true, seed: 5, logprobs: true };
    const whole = (await postJson(url, request)).body;
    const events = await postSse(url, {
      ...request,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = jsonChunks(events);
    const [first, ...rest] = chunks;
    expect(first.choices[0].delta).toEqual({ role: "assistant", content: "" });
    expect(first.prompt_token_ids).toEqual(whole.prompt_token_ids);
    const usage = rest.pop();
    expect(usage.choices).toEqual([]);
    expect(usage.usage.completion_tokens).toBe(whole.usage.completion_tokens);
    expect(rest.flatMap((c) => c.choices[0].token_ids)).toEqual(whole.choices[0].token_ids);
    expect(rest.map((c) => c.choices[0].delta.content).join("")).toBe(
      whole.choices[0].message.content,
    );
    expect(rest.flatMap((c) => c.choices[0].logprobs.content)).toEqual(
      whole.choices[0].logprobs.content,
    );
    expect(rest.at(-1).choices[0]).toMatchObject({ finish_reason: "stop", stop_reason: null });
    expect(rest.slice(0, -1).every((c) => c.choices[0].finish_reason === null)).toBe(true);
  });

  it("parses a hermes tool call into tool_calls with finish_reason tool_calls", async () => {
    const { body } = await postJson(url, {
      messages: QUESTION,
      tools: [CALCULATOR_TOOL],
      return_token_ids: true,
    });
    const choice = body.choices[0];
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toEqual([
      {
        id: expect.stringMatching(/^chatcmpl-tool-[0-9a-f]{32}$/),
        type: "function",
        function: { name: "calculate", arguments: '{"expression": "12 * (3 + 4)"}' },
      },
    ]);
    expect(decode(choice.token_ids)).toBe(
      '<tool_call>\n{"name":"calculate","arguments":{"expression":"12 * (3 + 4)"}}\n</tool_call><|im_end|>',
    );
  });

  it("streams tool calls as name then argument deltas", async () => {
    const chunks = jsonChunks(
      await postSse(url, { messages: QUESTION, tools: [CALCULATOR_TOOL], stream: true }),
    );
    const calls = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(calls[0]).toMatchObject({ index: 0, type: "function", function: { name: "calculate" } });
    expect(JSON.parse(calls.map((c) => c.function.arguments ?? "").join(""))).toEqual({
      expression: "12 * (3 + 4)",
    });
    expect(chunks.at(-1).choices[0].finish_reason).toBe("tool_calls");
  });

  it("returns one strictly negative logprob per completion token", async () => {
    const { body } = await postJson(url, {
      messages: QUESTION,
      logprobs: true,
      top_logprobs: 3,
      return_token_ids: true,
    });
    const content = body.choices[0].logprobs.content;
    expect(content).toHaveLength(body.choices[0].token_ids.length);
    for (const entry of content) {
      expect(entry.logprob).toBeLessThan(0);
      expect(entry.logprob).toBeGreaterThanOrEqual(-3);
      expect(entry.top_logprobs).toHaveLength(3);
      expect(entry.top_logprobs[0]).toEqual({
        token: entry.token,
        logprob: entry.logprob,
        bytes: entry.bytes,
      });
    }
  });

  it("truncates at max_tokens with finish_reason length and no EOS", async () => {
    const { body } = await postJson(url, {
      messages: QUESTION,
      max_tokens: 4,
      return_token_ids: true,
    });
    expect(body.choices[0].finish_reason).toBe("length");
    expect(body.choices[0].token_ids).toHaveLength(4);
    expect(body.choices[0].token_ids).not.toContain(EOS_TOKEN_ID);
    expect(body.usage.completion_tokens).toBe(4);
  });

  it("stops at a stop string and reports it as stop_reason", async () => {
    const { body } = await postJson(url, { messages: QUESTION, stop: [" ="] });
    expect(body.choices[0]).toMatchObject({ finish_reason: "stop", stop_reason: " =" });
    expect(body.choices[0].message.content).toBe("12 * (3 + 4)");
  });

  it("keeps the stop string with include_stop_str_in_output, and while streaming holds back longest-stop - 1 characters as vLLM's stop buffer does", async () => {
    const kept = await postJson(url, {
      messages: QUESTION,
      stop: [" =", "(3 + 4) = 8"],
      include_stop_str_in_output: true,
    });
    expect(kept.body.choices[0]).toMatchObject({
      finish_reason: "stop",
      stop_reason: " =",
      message: { content: "12 * (3 + 4) =" },
    });
    const request = { messages: QUESTION, stop: [" =", "(3 + 4) = 8"], return_token_ids: true };
    const whole = (await postJson(url, request)).body.choices[0];
    const chunks = jsonChunks(await postSse(url, { ...request, stream: true })).slice(1);
    const texts = chunks.map((c) => c.choices[0].delta.content ?? "");
    expect(texts.join("")).toBe("12 * (3 + 4)");
    // Each chunk before the last sends the text of the tokens so far but its last 10 characters.
    chunks.slice(0, -1).forEach((_, i) => {
      const generated = decode(
        chunks.slice(0, i + 1).flatMap((c) => c.choices[0].token_ids),
        { skipSpecialTokens: true },
      );
      expect(texts.slice(0, i + 1).join("")).toBe(
        generated.slice(0, Math.max(0, generated.length - 10)),
      );
    });
    expect(chunks.flatMap((c) => c.choices[0].token_ids)).toEqual(whole.token_ids);
  });

  it("rejects a prompt that does not fit with vLLM's context-length error", async () => {
    const { status, body } = await postJson(url, {
      messages: QUESTION,
      max_tokens: 4090,
      return_token_ids: true,
    });
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ type: "BadRequestError", param: "input_tokens", code: 400 });
    expect(body.error.message).toMatch(
      /^This model's maximum context length is 4096 tokens\. However, you requested 4090 output tokens and your prompt contains \d+ input tokens/,
    );
    const huge = await postJson(url, {
      messages: [{ role: "user", content: "x".repeat(300_000) }],
    });
    expect(huge.status).toBe(400);
    expect(huge.body.error.message).toMatch(
      /you requested 0 output tokens and your prompt contains 3000\d\d input tokens/,
    );
  });

  it("answers vLLM's 404 for another model name and 400 for invalid bodies", async () => {
    expect(await postJson(url, { model: "gpt-4", messages: QUESTION })).toMatchObject({
      status: 404,
      body: {
        error: {
          message: "The model `gpt-4` does not exist.",
          type: "NotFoundError",
          param: "model",
          code: 404,
        },
      },
    });
    expect((await postJson(url, { messages: [{ role: "wizard", content: "x" }] })).status).toBe(
      400,
    );
    expect(
      (await postJson(url, { messages: [{ role: "wizard", content: "x" }] })).body.error,
    ).toMatchObject({ type: "Bad Request", code: 400 });
  });
});
