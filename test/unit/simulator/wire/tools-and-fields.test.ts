/**
 * Wire compatibility with vLLM, part 3: forced tool choice and field presence. Written from
 * vLLM's own sources (vllm-project/vllm, read file by file):
 * - vllm/entrypoints/openai/chat_completion/serving.py @ 5e918640d7b65820db5beaa98c2a99925bff7c17
 *   (named / "required" tool choice: `content=""`, finish_reason; streaming named deltas use the
 *   choice index; request id `chatcmpl-{_base_request_id(raw_request, request.request_id)}`)
 * - vllm/entrypoints/openai/chat_completion/protocol.py @ d5dba2d7b0ab9b98096560c69db7126b54b14d79
 *   (ChatMessage / ChatCompletionResponse fields)
 * - vllm/entrypoints/openai/chat_completion/api_router.py @ c0bc59655a4068c08621bcac8ab67b39cd2ec173
 *   (non-stream body is `model_dump()`: null fields present)
 * and PRs #44105 (empty tool_calls omitted), #42052 (`prompt_text`), #46768 (`metrics`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type VllmSimulator, decode, startVllmSimulator } from "../../../../tools/simulator";
import { CALCULATOR_TOOL, jsonChunks, postJson, postSse } from "../simulator-fixtures";

const MATH = {
  messages: [{ role: "user", content: "What is (3 + 4) * 5?" }],
  tools: [CALCULATOR_TOOL],
  seed: 2,
  return_token_ids: true,
};
const NAMED = { type: "function", function: { name: "calculate" } };

describe("vLLM wire: forced tool choice", () => {
  let sim: VllmSimulator;
  let url: string;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, seed: 3 });
    url = `${sim.url}/v1/chat/completions`;
  });
  afterAll(() => sim.close());

  it('answers a named tool choice with content "", the call, finish_reason stop, from JSON-constrained tokens', async () => {
    const auto = (await postJson(url, MATH)).body.choices[0];
    const { body } = await postJson(url, { ...MATH, tool_choice: NAMED });
    const choice = body.choices[0];
    expect(choice.finish_reason).toBe("stop");
    expect(choice.message.content).toBe("");
    expect(choice.message.tool_calls).toEqual([
      {
        id: expect.stringMatching(/^chatcmpl-tool-[0-9a-f]{32}$/),
        type: "function",
        function: { name: "calculate", arguments: '{"expression":"(3 + 4) * 5"}' },
      },
    ]);
    expect(decode(choice.token_ids, { skipSpecialTokens: true })).toBe(
      '{"expression":"(3 + 4) * 5"}',
    );
    // "auto" lets the hermes parser read <tool_call> tags: other tokens for the same call.
    expect(decode(auto.token_ids)).toContain("<tool_call>");
    expect(auto.token_ids).not.toEqual(choice.token_ids);
    expect(auto.message.content).toBeNull();
  });

  it('answers tool_choice required with content "" and finish_reason tool_calls from a JSON array', async () => {
    const { body } = await postJson(url, { ...MATH, tool_choice: "required" });
    const choice = body.choices[0];
    expect(choice).toMatchObject({
      finish_reason: "tool_calls",
      message: {
        content: "",
        tool_calls: [
          {
            type: "function",
            function: { name: "calculate", arguments: '{"expression": "(3 + 4) * 5"}' },
          },
        ],
      },
    });
    expect(decode(choice.token_ids, { skipSpecialTokens: true })).toBe(
      '[{"name":"calculate","parameters":{"expression":"(3 + 4) * 5"}}]',
    );
  });

  it("streams a named call as one delta with id and name, then argument text, indexed by the choice", async () => {
    const chunks = jsonChunks(
      await postSse(url, { ...MATH, tool_choice: NAMED, stream: true, n: 2 }),
    );
    for (const index of [0, 1]) {
      const calls = chunks.flatMap((c) =>
        c.choices
          .filter((choice: { index: number }) => choice.index === index)
          .flatMap(
            (choice: { delta: { tool_calls?: unknown[] } }) => choice.delta.tool_calls ?? [],
          ),
      );
      expect(calls[0]).toMatchObject({ index, type: "function", function: { name: "calculate" } });
      expect(calls.slice(1).every((call: { id?: string }) => call.id === undefined)).toBe(true);
      expect(
        calls.map((call: { function: { arguments: string } }) => call.function.arguments).join(""),
      ).toBe('{"expression":"(3 + 4) * 5"}');
    }
    const required = jsonChunks(
      await postSse(url, { ...MATH, tool_choice: "required", stream: true }),
    );
    const calls = required.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(
      calls.map((call: { function: { arguments: string } }) => call.function.arguments).join(""),
    ).toBe('{"expression":"(3 + 4) * 5"}');
    expect(required.filter((c) => c.choices.length > 0).at(-1).choices[0].finish_reason).toBe(
      "tool_calls",
    );
  });
});

describe("vLLM wire: field presence", () => {
  let sim: VllmSimulator;
  let url: string;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, seed: 4, latency: { ttftMs: 5, perTokenMs: 1 } });
    url = `${sim.url}/v1/chat/completions`;
  });
  afterAll(() => sim.close());

  it("sends exactly vLLM's message and response keys, with no tool_calls when none were made", async () => {
    const { body } = await postJson(url, {
      messages: [{ role: "user", content: "What is 2 + 2?" }],
    });
    expect(Object.keys(body)).toEqual([
      "id",
      "object",
      "created",
      "model",
      "choices",
      "service_tier",
      "system_fingerprint",
      "usage",
      "prompt_logprobs",
      "prompt_token_ids",
      "kv_transfer_params",
    ]);
    expect(Object.keys(body.choices[0])).toEqual([
      "index",
      "message",
      "logprobs",
      "finish_reason",
      "stop_reason",
      "token_ids",
    ]);
    expect(Object.keys(body.choices[0].message)).toEqual([
      "role",
      "content",
      "refusal",
      "annotations",
      "audio",
      "function_call",
      "reasoning",
    ]);
    sim.configure({ compat: { emptyToolCallsList: true } });
    const older = (await postJson(url, { messages: [{ role: "user", content: "What is 2 + 2?" }] }))
      .body;
    sim.configure({ compat: { emptyToolCallsList: false } });
    expect(older.choices[0].message.tool_calls).toEqual([]);
  });

  it("sends the rendered prompt_text with return_token_ids (first chunk when streaming)", async () => {
    const request = { messages: [{ role: "user", content: "Hi" }], return_token_ids: true };
    const { body } = await postJson(url, request);
    expect(body.prompt_text).toBe(decode(body.prompt_token_ids));
    expect(body.prompt_text).toContain("<|im_start|>user\nHi<|im_end|>");
    const chunks = jsonChunks(await postSse(url, { ...request, stream: true }));
    expect(chunks[0].prompt_text).toBe(body.prompt_text);
    expect(chunks.slice(1).some((chunk) => "prompt_text" in chunk)).toBe(false);
    expect((await postJson(url, { messages: request.messages })).body).not.toHaveProperty(
      "prompt_text",
    );
  });

  it("sends metrics only with --enable-per-request-metrics and include_metrics, for one choice", async () => {
    const request = { messages: [{ role: "user", content: "Hi" }], include_metrics: true };
    expect((await postJson(url, request)).body).not.toHaveProperty("metrics");
    sim.configure({ perRequestMetrics: true });
    const { body } = await postJson(url, request);
    const several = (await postJson(url, { ...request, n: 2 })).body;
    const streamed = jsonChunks(
      await postSse(url, { ...request, stream: true, stream_options: { include_usage: true } }),
    );
    sim.configure({ perRequestMetrics: false });
    // The frontend's 5 ms, then the engine step that samples the first token (1 ms).
    expect(body.metrics).toMatchObject({
      time_to_first_token_ms: 6,
      mean_itl_ms: 1,
      queue_time_ms: 0,
    });
    expect(body.metrics.tokens_per_second).toBeGreaterThan(0);
    expect(several).not.toHaveProperty("metrics");
    expect(streamed.at(-1).metrics).toMatchObject({ time_to_first_token_ms: 6 });
  });

  it("takes the response id from X-Request-Id, else the body's request_id, on every chunk too", async () => {
    const request = { messages: [{ role: "user", content: "Hi" }] };
    expect((await postJson(url, request, { "x-request-id": "abc-123" })).body.id).toBe(
      "chatcmpl-abc-123",
    );
    expect((await postJson(url, { ...request, request_id: "body-9" })).body.id).toBe(
      "chatcmpl-body-9",
    );
    expect(
      (await postJson(`${sim.url}/v1/completions`, { prompt: "x" }, { "x-request-id": "abc-123" }))
        .body.id,
    ).toBe("cmpl-abc-123");
    const chunks = jsonChunks(
      await postSse(url, { ...request, stream: true }, { "x-request-id": "s-1" }),
    );
    expect(new Set(chunks.map((chunk) => chunk.id))).toEqual(new Set(["chatcmpl-s-1"]));
  });
});
