import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  EOS_TOKEN_ID,
  type VllmSimulator,
  decode,
  startVllmSimulator,
} from "../../../tools/simulator";
import { CALCULATOR_TOOL, jsonChunks, postJson, postSse } from "./simulator-fixtures";

describe("POST /v1/completions", () => {
  let sim: VllmSimulator;
  let url: string;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, successRate: 1 });
    url = `${sim.url}/v1/completions`;
  });
  afterAll(() => sim.close());

  it("answers a text prompt in vLLM's shape, defaulting max_tokens to 16", async () => {
    const { status, body } = await postJson(url, {
      prompt: "Say something",
      return_token_ids: true,
      seed: 2,
    });
    expect(status).toBe(200);
    expect(body.id).toMatch(/^cmpl-/);
    expect(body.object).toBe("text_completion");
    const choice = body.choices[0];
    expect(choice.prompt_token_ids.length).toBe(body.usage.prompt_tokens);
    expect(choice.token_ids.length).toBeLessThanOrEqual(16);
    expect(decode(choice.token_ids, { skipSpecialTokens: true })).toBe(choice.text);
  });

  it("reads a ChatML token prompt from /tokenize and writes the hermes tool call as text", async () => {
    const rendered = await postJson(`${sim.url}/tokenize`, {
      messages: [{ role: "user", content: "What is 6 * 7?" }],
      tools: [CALCULATOR_TOOL],
    });
    const { body } = await postJson(url, {
      prompt: rendered.body.tokens,
      max_tokens: 200,
      return_token_ids: true,
    });
    expect(body.choices[0].text).toBe(
      '<tool_call>\n{"name":"calculate","arguments":{"expression":"6 * 7"}}\n</tool_call>',
    );
    expect(body.choices[0].token_ids.at(-1)).toBe(EOS_TOKEN_ID);
    expect(body.choices[0].finish_reason).toBe("stop");
  });

  it("returns legacy logprobs arrays, one entry per token", async () => {
    const { body } = await postJson(url, {
      prompt: "What is 2 + 2?",
      max_tokens: 50,
      logprobs: 2,
      return_token_ids: true,
    });
    const { logprobs, token_ids: ids, text } = body.choices[0];
    expect(logprobs.tokens).toHaveLength(ids.length);
    expect(logprobs.token_logprobs.every((lp: number) => lp < 0 && lp >= -3)).toBe(true);
    expect(Object.keys(logprobs.top_logprobs[0])).toHaveLength(2);
    expect(logprobs.text_offset[0]).toBe(0);
    expect(text).toContain("\\boxed{4}");
  });

  it("streams text deltas whose token ids match the non-stream answer", async () => {
    const request = { prompt: "What is 10 - 3?", max_tokens: 60, seed: 4, return_token_ids: true };
    const whole = (await postJson(url, request)).body.choices[0];
    const chunks = jsonChunks(await postSse(url, { ...request, stream: true }));
    expect(chunks[0].choices[0].prompt_token_ids).toEqual(whole.prompt_token_ids);
    expect(chunks.flatMap((c) => c.choices[0].token_ids)).toEqual(whole.token_ids);
    expect(chunks.map((c) => c.choices[0].text).join("")).toBe(whole.text);
    expect(chunks.at(-1).choices[0].finish_reason).toBe("stop");
  });
});
