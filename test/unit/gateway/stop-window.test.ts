/** Unit: a call's stop strings checked across cuts, held back and cut as vLLM's detokenizer does. */
import { describe, expect, it } from "vitest";
import { stopOptionsOf, StopWindow } from "../../../src/gateway/stop-window";

const window = (stop: string[], includeInOutput = false, minTokens = 0) =>
  new StopWindow({ stop, includeInOutput, minTokens });
const text = (release: { reasoning: string; content: string }) =>
  release.reasoning + release.content;

describe("StopWindow", () => {
  it("holds back longest-stop - 1 characters, then cuts before a stop string that straddles a cut", () => {
    const w = window(["STOP", "X"]);
    expect(w.pushFields("", "Hello S", 1)).toEqual({ reasoning: "", content: "Hell", stop: null });
    // The cut: the continuation's raw text completes the stop string.
    expect(w.pushRaw("TO", 1)).toEqual({ reasoning: "", content: "o ", stop: null });
    expect(w.pushRaw("P and more", 1)).toEqual({ reasoning: "", content: "", stop: "STOP" });
    expect(w.stopped).toBe("STOP");
  });

  it("keeps the stop string with include_stop_str_in_output, holding nothing back", () => {
    const w = window(["STOP"], true);
    expect(text(w.pushFields("", "Hello ST", 1))).toBe("Hello ST");
    expect(w.pushRaw("OP and", 1)).toEqual({ reasoning: "", content: "OP", stop: "STOP" });
  });

  it("takes the first stop string in the order given that the new text completes, as vLLM does", () => {
    const w = window(["bc", "abcd"]);
    w.pushRaw("xab", 1);
    expect(w.pushRaw("cd", 1).stop).toBe("bc");
  });

  it("does not look for stop strings before min_tokens", () => {
    const w = window(["a"], false, 1);
    expect(w.pushRaw("a", 1).stop).toBeNull();
    expect(w.pushRaw("ba", 1).stop).toBe("a");
  });

  it("sends everything held back when the upstream finishes, cutting a stop string only the server saw", () => {
    const w = window(["END"]);
    w.pushRaw("abcd", 1);
    expect(text(w.finish(null))).toBe("cd");
    // The parser removed the `<think>` the server matched with the rest: the part this window saw is cut.
    const v = window(["<think>\nI"]);
    expect(text(v.pushFields("\nI", "", 1))).toBe("");
    expect(v.finish("<think>\nI")).toEqual({ reasoning: "", content: "", stop: "<think>\nI" });
  });

  it("checks the raw text of a resumed think block: reasoning, the tag (never sent), then content", () => {
    const w = window(["\n\nA"]);
    expect(w.pushFields("I think", "", 1)).toEqual({ reasoning: "I thi", content: "", stop: null });
    // Cut inside the think block: the continuation's raw text carries the tag.
    expect(w.pushRaw(" so.</thi", 1)).toEqual({ reasoning: "nk so.", content: "", stop: null });
    expect(w.pushRaw("nk>\n\nB", 1)).toEqual({ reasoning: "", content: "\n", stop: null });
    expect(w.pushRaw("\n\nA", 1)).toEqual({ reasoning: "", content: "\nB", stop: "\n\nA" });
  });

  it("matches a stop string that spans the end of the think block, as vLLM matches the raw output", () => {
    const w = window(["nk</think>A"]);
    w.pushFields("I think", "", 1);
    expect(w.pushFields("", "Answer", 1)).toEqual({
      reasoning: "I thi",
      content: "",
      stop: "nk</think>A",
    });
  });
});

describe("stopOptionsOf", () => {
  it("reads stop, include_stop_str_in_output and min_tokens; no non-empty stop string is no stop", () => {
    expect(stopOptionsOf({ stop: "a", include_stop_str_in_output: true, min_tokens: 2 })).toEqual({
      stop: ["a"],
      includeInOutput: true,
      minTokens: 2,
    });
    expect(stopOptionsOf({ stop: ["", "b"] })).toEqual({
      stop: ["b"],
      includeInOutput: false,
      minTokens: 0,
    });
    expect(stopOptionsOf({ stop: [] })).toBeNull();
    expect(stopOptionsOf({ stop: "" })).toBeNull();
  });
});
