import { describe, expect, it } from "vitest";
import {
  EOS_TOKEN_ID,
  SPECIAL_TOKENS,
  VOCAB_SIZE,
  decode,
  encode,
  tokenToString,
} from "../../../tools/simulator";

describe("simulator tokenizer", () => {
  it("round-trips ASCII, unicode, emoji and special-token strings exactly", () => {
    const samples = [
      "",
      "The answer is \\boxed{42}.",
      "héllo wörld — ünïcödé ✓ 中文 日本語",
      "emoji 🎉👩‍👩‍👧 and flags 🇫🇷",
      "\uFEFFa leading byte-order mark",
      '<|im_start|>user\nhi<|im_end|>\n<tool_call>\n{"name":"x"}\n</tool_call>',
      "<|im_end",
      "<<think>>",
      "tabs\tand\r\nnewlines\n\n\n",
    ];
    for (const sample of samples) expect(decode(encode(sample))).toBe(sample);
  });

  it("round-trips pseudo-random strings over the whole BMP and astral planes", () => {
    let state = 7;
    const next = () => (state = (state * 1103515245 + 12345) % 2147483648);
    for (let n = 0; n < 200; n++) {
      let text = "";
      for (let i = next() % 40; i > 0; i--) {
        const code = next() % 4 === 0 ? 0x10000 + (next() % 0xfffff) : next() % 0xd800;
        text += String.fromCodePoint(code);
      }
      expect(decode(encode(text))).toBe(text);
    }
  });

  it("gives special tokens small fixed ids with <|im_end|> as EOS", () => {
    expect(SPECIAL_TOKENS["<|endoftext|>"]).toBe(0);
    expect(EOS_TOKEN_ID).toBe(2);
    expect(encode("<|im_start|>assistant\n")[0]).toBe(1);
    expect(encode("a<think>b</think>")).toEqual([expect.any(Number), 7, expect.any(Number), 8]);
    expect(tokenToString(EOS_TOKEN_ID)).toBe("<|im_end|>");
  });

  it("prefers the longest vocabulary piece", () => {
    const ids = encode(" the answer is \\boxed{12}");
    expect(ids.map(tokenToString)).toEqual([" the", " answer", " is", " ", "\\boxed{", "12", "}"]);
    expect(Math.max(...ids)).toBeLessThan(VOCAB_SIZE);
  });

  it("drops only control tokens when asked to skip special tokens", () => {
    const ids = encode("<think>x</think>y<|im_end|>");
    expect(decode(ids, { skipSpecialTokens: true })).toBe("<think>x</think>y");
  });

  it("rejects ids outside the vocabulary", () => {
    expect(() => decode([VOCAB_SIZE])).toThrow(RangeError);
  });
});
