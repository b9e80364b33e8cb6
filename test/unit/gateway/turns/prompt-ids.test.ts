import { describe, expect, it } from "vitest";
import { continuedPrompt } from "../../../../src/gateway/turns/prompt-ids";

const END = 9;
const previous = { prompt_token_ids: [1, END, 2, 3], completion_token_ids: [4, 5, END] };

describe("continuedPrompt", () => {
  it("appends what the template renders after the answer's turn end, whatever it made of the answer", () => {
    // history: system turn, then the template's own copy of the answer (40 41 42: an empty think block).
    const history = [1, END, 2, 3, 40, 41, 42, END];
    const full = [1, END, 2, 3, 40, END, 7, 8, 8, END, 7, 6];
    expect(continuedPrompt(previous, { history, full })).toEqual({
      ids: [1, END, 2, 3, 4, 5, END, 7, 8, 8, END, 7, 6],
      added: 6,
    });
  });

  it("reports drift when the template renders the earlier conversation differently", () => {
    const history = [1, 50, END, 2, 3, 40, END];
    const full = [1, END, 2, 3, 40, END, 7, 8];
    expect(continuedPrompt(previous, { history, full })).toEqual({
      drift: "the template renders the earlier conversation differently now",
    });
  });

  it("reports drift when the answer has no ids or the template never closes it", () => {
    expect(continuedPrompt(previous, { history: [1, 2], full: [1, 2, 3] })).toHaveProperty("drift");
    const empty = { ...previous, completion_token_ids: [] };
    expect(continuedPrompt(empty, { history: [1, END], full: [1, END, 2] })).toHaveProperty(
      "drift",
    );
    expect(
      continuedPrompt(previous, { history: [1, END, 3, END], full: [1, END, 3] }),
    ).toHaveProperty("drift");
  });
});
