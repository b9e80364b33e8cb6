import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fetchTokenTexts } from "../../../../src/gateway/backends/token-texts";
import { pieceText } from "../../../../src/gateway/backends/token-pieces";
import { type VllmSimulator, startVllmSimulator } from "../../../../tools/simulator";
import { postJson } from "../../simulator/simulator-fixtures";

describe("fetchTokenTexts (unit, vLLM simulator on loopback)", () => {
  let sim: VllmSimulator;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, tokenizer: "qwen3" });
  });
  afterAll(() => sim.close());

  it("gives one text per id of a chat prompt whose concatenation is the server's detokenization", async () => {
    const messages = [
      { role: "system", content: "Be exact." },
      { role: "user", content: "What is 9 * 9?\n\tThanks" },
    ];
    const ids = (await postJson(`${sim.url}/tokenize`, { messages, add_generation_prompt: true }))
      .body.tokens as number[];
    const texts = await fetchTokenTexts(fetch, { root: sim.url, model: undefined }, ids);
    expect(texts).toHaveLength(ids.length);
    const detokenized = (await postJson(`${sim.url}/detokenize`, { tokens: ids })).body
      .prompt as string;
    expect(texts!.join("")).toBe(detokenized);
    expect(texts).toContain("<|im_start|>");
    expect(texts).toContain("system");
  });

  it("shows each byte-level piece of a character split across tokens as U+FFFD, as vLLM's logprob tokens do", async () => {
    const ids = (await postJson(`${sim.url}/tokenize`, { prompt: "🌍" })).body.tokens as number[];
    const texts = await fetchTokenTexts(fetch, { root: sim.url, model: undefined }, ids);
    if (ids.length > 1) expect(texts!.every((t) => t.includes("\uFFFD"))).toBe(true);
    else expect(texts).toEqual(["🌍"]);
  });

  it("says nothing when the ids do not come back from their own text, or the server has no /tokenize", async () => {
    // Two ids whose text re-tokenizes as one token: "a" + "b" pieces re-merge into "ab".
    const a = (await postJson(`${sim.url}/tokenize`, { prompt: "a" })).body.tokens as number[];
    const b = (await postJson(`${sim.url}/tokenize`, { prompt: "b" })).body.tokens as number[];
    const ab = (await postJson(`${sim.url}/tokenize`, { prompt: "ab" })).body.tokens as number[];
    expect(ab).toHaveLength(1);
    expect(
      await fetchTokenTexts(fetch, { root: sim.url, model: undefined }, [...a, ...b]),
    ).toBeNull();
    expect(
      await fetchTokenTexts(fetch, { root: `${sim.url}/nowhere`, model: undefined }, a),
    ).toBeNull();
  });

  it("decodes byte-level pieces, keeps added tokens and reads SentencePiece's word mark as a space", () => {
    expect(pieceText("Ġis")).toBe(" is");
    expect(pieceText("ĊĉĠ")).toBe("\n\t ");
    expect(pieceText("<|im_end|>")).toBe("<|im_end|>");
    expect(pieceText("Ã¼")).toBe("ü");
    expect(pieceText("ð")).toBe("\uFFFD");
    expect(pieceText("▁is")).toBe(" is");
  });
});
