/** Unit: a resumed call's raw text split into reasoning and content as vLLM's qwen3 parser splits the whole. */
import { describe, expect, it } from "vitest";
import { ContinuationReasoning } from "../../../src/gateway/continuation-reasoning";

function run(inReasoning: boolean, chunks: string[]) {
  const split = new ContinuationReasoning(inReasoning);
  return chunks.map((text, i) => split.take(text, i === chunks.length - 1));
}

describe("ContinuationReasoning", () => {
  it("sends a call cut inside its think block on as reasoning up to the tag, then content, never the tag", () => {
    const out = run(true, [" so 6 times 7", " is 42.", "</think>", "\nThe answer is 42."]);
    expect(out.map((d) => d.reasoning).join("")).toBe(" so 6 times 7 is 42.");
    expect(out.map((d) => d.content).join("")).toBe("\nThe answer is 42.");
  });

  it("splits a chunk that holds the tag, and holds back a tag's start until the next chunk tells", () => {
    const out = run(true, ["almost</th", "ink>done", " here"]);
    expect(out[0]).toEqual({ reasoning: "almost", content: "" });
    expect(out[1]).toEqual({ reasoning: "", content: "done" });
    expect(out[2]).toEqual({ reasoning: "", content: " here" });
    // Held back, then not the tag after all: it is reasoning.
    const not = run(true, ["a </", "b", "c"]);
    expect(not.map((d) => d.reasoning).join("")).toBe("a </bc");
  });

  it("flushes what it held when the stream ends, and passes everything through as content outside a think block", () => {
    expect(run(true, ["cut off </thi"])).toEqual([{ reasoning: "cut off </thi", content: "" }]);
    expect(run(false, ["plain </think> text"])).toEqual([
      { reasoning: "", content: "plain </think> text" },
    ]);
  });
});
