/**
 * Wire compatibility with vLLM, part 2: several choices, completions echo, request validation.
 * Written from vLLM's own sources (vllm-project/vllm, read file by file):
 * - vllm/entrypoints/openai/completion/serving.py @ cc139d8ea6ff4db984778a3e77e95e1d1c7f1362
 *   (request_output_to_completion_response: echo text and prompt logprobs, one choice per output)
 * - vllm/entrypoints/openai/chat_completion/serving.py @ 5e918640d7b65820db5beaa98c2a99925bff7c17
 *   (num_choices = request.n: a role chunk per choice, usage summed over outputs)
 * - vllm/entrypoints/openai/utils.py @ 432a38c440655622ff7875c4877f0756c44e1fbf (validate_json_request)
 * - vllm/entrypoints/openai/api_server.py validation_exception_handler (type
 *   HTTPStatus.BAD_REQUEST.phrase, param from a VLLMValidationError) and
 *   vllm/exceptions.py @ f984edf698e863600a1f5973c283fa9595c8707c (`(parameter=…, value=…)` wording)
 * - vllm/entrypoints/openai/chat_completion/protocol.py @ d5dba2d7b0ab9b98096560c69db7126b54b14d79
 *   (validate_stream_options, check_logprobs, check_tool_usage) and PR #51447 (VLLM_MAX_STOP_STRINGS = 4).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type VllmSimulator, startVllmSimulator } from "../../../../tools/simulator";
import { jsonChunks, postJson, postSse } from "../simulator-fixtures";

const QUESTION = [{ role: "user", content: "Say something." }];

describe("vLLM wire: n > 1 and echo", () => {
  let sim: VllmSimulator;
  let chat: string;
  let completions: string;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, seed: 2 });
    chat = `${sim.url}/v1/chat/completions`;
    completions = `${sim.url}/v1/completions`;
  });
  afterAll(() => sim.close());

  it("answers n chat choices, indexed, sampled independently, usage summed over them", async () => {
    const { status, body } = await postJson(chat, {
      messages: QUESTION,
      n: 4,
      seed: 9,
      return_token_ids: true,
    });
    expect(status).toBe(200);
    expect(body.choices.map((c: { index: number }) => c.index)).toEqual([0, 1, 2, 3]);
    expect(
      new Set(body.choices.map((c: { token_ids: number[] }) => c.token_ids.join())).size,
    ).toBeGreaterThan(1);
    expect(body.usage.completion_tokens).toBe(
      body.choices.reduce((sum: number, c: { token_ids: number[] }) => sum + c.token_ids.length, 0),
    );
    expect(body.usage.prompt_tokens).toBe(body.prompt_token_ids.length);
    // Choice 0 is what the same request with n = 1 answers.
    expect(
      (await postJson(chat, { messages: QUESTION, seed: 9, return_token_ids: true })).body
        .choices[0].token_ids,
    ).toEqual(body.choices[0].token_ids);
    const greedy = (
      await postJson(chat, { messages: QUESTION, n: 3, temperature: 0, return_token_ids: true })
    ).body.choices;
    expect(greedy[1].token_ids).toEqual(greedy[0].token_ids);
  });

  it("streams a role chunk then tokens and a finish_reason for every choice", async () => {
    const whole = (
      await postJson(chat, { messages: QUESTION, n: 2, seed: 3, return_token_ids: true })
    ).body;
    const chunks = jsonChunks(
      await postSse(chat, {
        messages: QUESTION,
        n: 2,
        seed: 3,
        return_token_ids: true,
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    for (const index of [0, 1]) {
      const own = chunks.flatMap((chunk) =>
        chunk.choices.filter((c: { index: number }) => c.index === index),
      );
      expect(own[0].delta).toEqual({ role: "assistant", content: "" });
      expect(own.flatMap((c: { token_ids?: number[] }) => c.token_ids ?? [])).toEqual(
        whole.choices[index].token_ids,
      );
      expect(own.at(-1).finish_reason).toBe("stop");
    }
    expect(chunks.at(-1).usage.completion_tokens).toBe(whole.usage.completion_tokens);
  });

  it("echoes the prompt before the completion text, with the prompt's logprobs first (the very first null)", async () => {
    const body = {
      prompt: "The answer to 6 * 7 is",
      max_tokens: 6,
      seed: 1,
      logprobs: 0,
      echo: true,
    };
    const { body: reply } = await postJson(completions, body);
    const choice = reply.choices[0];
    const plain = (await postJson(completions, { ...body, echo: false, return_token_ids: true }))
      .body.choices[0];
    expect(choice.text).toBe(`The answer to 6 * 7 is${plain.text}`);
    expect(choice.logprobs.token_logprobs[0]).toBeNull();
    expect(choice.logprobs.token_logprobs).toHaveLength(
      plain.prompt_token_ids.length + plain.token_ids.length,
    );
    expect(choice.logprobs.token_logprobs.slice(plain.prompt_token_ids.length)).toEqual(
      plain.logprobs.token_logprobs,
    );
    // With return_token_ids vLLM blanks the echoed text: the ids already carry the prompt.
    expect(
      (await postJson(completions, { ...body, return_token_ids: true })).body.choices[0].text,
    ).toBe(plain.text);
    const streamed = jsonChunks(await postSse(completions, { ...body, stream: true }));
    expect(streamed.map((chunk) => chunk.choices[0]?.text ?? "").join("")).toBe(choice.text);
  });

  it("answers n completions choices", async () => {
    const { body } = await postJson(completions, {
      prompt: "Once upon a time",
      n: 3,
      max_tokens: 5,
      return_token_ids: true,
    });
    expect(body.choices.map((c: { index: number }) => c.index)).toEqual([0, 1, 2]);
    expect(body.usage.completion_tokens).toBe(
      body.choices.reduce((sum: number, c: { token_ids: number[] }) => sum + c.token_ids.length, 0),
    );
  });
});

describe("vLLM wire: request validation", () => {
  let sim: VllmSimulator;
  let chat: string;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, seed: 2 });
    chat = `${sim.url}/v1/chat/completions`;
  });
  afterAll(() => sim.close());

  it("refuses more than 4 stop strings with 400 Bad Request naming stop, and accepts 4", async () => {
    const five = await postJson(chat, { messages: QUESTION, stop: ["a", "b", "c", "d", "e"] });
    expect(five).toMatchObject({
      status: 400,
      body: { error: { type: "Bad Request", param: "stop", code: 400 } },
    });
    expect(five.body.error.message).toContain(
      "List should have at most 4 items after validation, not 5",
    );
    expect((await postJson(chat, { messages: QUESTION, stop: ["a", "b", "c", "d"] })).status).toBe(
      200,
    );
    expect(
      (
        await postJson(`${sim.url}/v1/completions`, {
          prompt: "x",
          stop: ["1", "2", "3", "4", "5"],
        })
      ).body.error.param,
    ).toBe("stop");
  });

  it("refuses a body that is not application/json, or has no content type, with 400 Bad Request", async () => {
    const body = JSON.stringify({ messages: QUESTION });
    for (const headers of [
      { "content-type": "text/plain" },
      { "content-type": "application/x-www-form-urlencoded" },
      {},
    ] as Array<Record<string, string>>) {
      // Bytes, so fetch adds no content type of its own.
      const response = await fetch(chat, {
        method: "POST",
        headers,
        body: new TextEncoder().encode(body),
      });
      const reply = (await response.json()) as {
        error: { type: string; message: string; param: unknown; code: number };
      };
      expect(response.status).toBe(400);
      expect(reply.error).toMatchObject({ type: "Bad Request", param: null, code: 400 });
      expect(reply.error.message).toContain(
        "Unsupported Media Type: Only 'application/json' is allowed",
      );
    }
    const charset = await fetch(chat, {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8" },
      body,
    });
    expect(charset.status).toBe(200);
  });

  it("answers request-model validator errors as Bad Request with param and VLLMValidationError's wording", async () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [
        { stream_options: { include_usage: true } },
        "stream_options",
        "Stream options can only be defined when `stream=True`. (parameter=stream_options)",
      ],
      [
        { top_logprobs: 2 },
        "top_logprobs",
        "when using `top_logprobs`, `logprobs` must be set to true. (parameter=top_logprobs)",
      ],
      [
        { tool_choice: "required" },
        "tool_choice",
        "When using `tool_choice`, `tools` must be set.",
      ],
    ];
    for (const [extra, param, wording] of cases) {
      const { status, body } = await postJson(chat, { messages: QUESTION, ...extra });
      expect(status, param).toBe(400);
      expect(body.error).toMatchObject({ type: "Bad Request", param, code: 400 });
      expect(body.error.message).toContain(wording);
    }
  });

  it("names the first bad field of a body that fails the schema; serving-time checks stay BadRequestError", async () => {
    const schema = await postJson(chat, { messages: QUESTION, temperature: "hot" });
    expect(schema.body.error).toMatchObject({
      type: "Bad Request",
      param: "temperature",
      code: 400,
    });
    const tooLong = await postJson(chat, { messages: QUESTION, max_tokens: 1_000_000 });
    expect(tooLong.body.error).toMatchObject({
      type: "BadRequestError",
      param: "input_tokens",
      code: 400,
    });
  });
});
