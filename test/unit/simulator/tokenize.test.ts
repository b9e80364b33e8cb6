import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type VllmSimulator, encode, startVllmSimulator } from "../../../tools/simulator";
import { CALCULATOR_TOOL, postJson } from "./simulator-fixtures";

describe("POST /tokenize and /detokenize", () => {
  let sim: VllmSimulator;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, maxModelLen: 32768 });
  });
  afterAll(() => sim.close());

  it("counts a chat exactly as long as the chat call's prompt_token_ids", async () => {
    const request = {
      messages: [
        { role: "system", content: "Be exact." },
        { role: "user", content: "What is 9 * 9?" },
      ],
      tools: [CALCULATOR_TOOL],
    };
    const tokenized = await postJson(`${sim.url}/tokenize`, {
      ...request,
      add_generation_prompt: true,
    });
    const chat = await postJson(`${sim.url}/v1/chat/completions`, {
      ...request,
      return_token_ids: true,
    });
    expect(tokenized.body).toMatchObject({
      count: chat.body.prompt_token_ids.length,
      max_model_len: 32768,
      token_strs: null,
    });
    expect(tokenized.body.tokens).toEqual(chat.body.prompt_token_ids);
  });

  it("tokenizes a plain prompt and detokenizes it back", async () => {
    const prompt = "Grüße 🌍 <|im_start|>user";
    const tokenized = await postJson(`${sim.url}/tokenize`, { prompt, return_token_strs: true });
    expect(tokenized.body.tokens).toEqual(encode(prompt));
    expect(tokenized.body.token_strs).toHaveLength(tokenized.body.count);
    const detokenized = await postJson(`${sim.url}/detokenize`, { tokens: tokenized.body.tokens });
    expect(detokenized.body).toEqual({ prompt });
  });

  it("rejects ids outside the vocabulary and unknown models", async () => {
    expect((await postJson(`${sim.url}/detokenize`, { tokens: [1, 10_000_000] })).status).toBe(400);
    expect((await postJson(`${sim.url}/tokenize`, { model: "other", prompt: "x" })).status).toBe(
      404,
    );
  });
});
