import { describe, expect, it } from "vitest";
import { continuedPrompt } from "../../../../src/gateway/turns/prompt-ids";

const EOS = 9;
const previous = { prompt_token_ids: [1, 2, 3], completion_token_ids: [4, 5, EOS] };

describe("continuedPrompt", () => {
  it("appends the template's glue after the stop token and the new part", () => {
    // history: the template's rendering (its own copy of the answer: 40 50), closed by EOS and 7.
    const prompt = continuedPrompt(previous, {
      history: [1, 2, 3, 40, 50, EOS, 7],
      full: [1, 2, 3, 40, 50, EOS, 7, 8, 8, 6],
    });
    expect(prompt).toEqual({ ids: [1, 2, 3, 4, 5, EOS, 7, 8, 8, 6], glue: 1, tail: 3 });
  });

  it("reports drift when the template renders the earlier conversation differently", () => {
    expect(
      continuedPrompt(previous, { history: [1, 2, 3, 40, EOS, 7], full: [1, 2, 3, EOS, 7, 8] }),
    ).toEqual({
      drift: "the template renders the earlier conversation differently now",
    });
  });

  it("reports drift when the template does not end the answer with its last sampled token", () => {
    expect(
      continuedPrompt(previous, { history: [1, 2, 3, 40], full: [1, 2, 3, 40, 8] }),
    ).toHaveProperty("drift");
    expect(
      continuedPrompt({ ...previous, completion_token_ids: [] }, { history: [1], full: [1, 2] }),
    ).toHaveProperty("drift");
  });
});
