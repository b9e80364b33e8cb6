/** Unit: which calls an interrupting sync may cut and resume exactly, and which it drains. */
import { describe, expect, it } from "vitest";
import { continuationBody, notInterruptibleBecause } from "../../../src/gateway/interruptible";

const plain = { model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 100 };

describe("notInterruptibleBecause", () => {
  it("lets plain generation be cut, with or without stop token ids or stop strings", () => {
    expect(notInterruptibleBecause("/chat/completions", plain)).toBeNull();
    expect(
      notInterruptibleBecause("/chat/completions", {
        ...plain,
        stop_token_ids: [151645],
        stop: [],
        temperature: 0.7,
      }),
    ).toBeNull();
    // The gateway checks stop strings across the cut itself (stop-window.ts).
    expect(notInterruptibleBecause("/chat/completions", { ...plain, stop: "\n\n" })).toBeNull();
    expect(
      notInterruptibleBecause("/chat/completions", {
        ...plain,
        stop: ["</answer>"],
        include_stop_str_in_output: true,
      }),
    ).toBeNull();
  });

  it("drains calls whose resumption would not be exact, naming why", () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ tools: [{ type: "function", function: { name: "f" } }] }, "tools"],
      [{ tool_choice: "required" }, "tool_choice"],
      [{ response_format: { type: "json_object" } }, "response_format"],
      [{ presence_penalty: 0.5 }, "presence_penalty"],
      [{ seed: 7 }, "seed"],
    ];
    for (const [extra, reason] of cases)
      expect(notInterruptibleBecause("/chat/completions", { ...plain, ...extra } as never)).toBe(
        reason,
      );
    expect(notInterruptibleBecause("/completions", plain)).toBe("text completions are drained");
  });
});

describe("continuationBody", () => {
  it("continues from prompt + generated ids with the tokens left and the same sampling", () => {
    const body = continuationBody(
      {
        ...plain,
        temperature: 0.6,
        top_p: 0.9,
        stop_token_ids: [7],
        logprobs: true,
        top_logprobs: 2,
      },
      [1, 2, 3],
      [4, 5],
    );
    expect(body).toMatchObject({
      prompt: [1, 2, 3, 4, 5],
      max_tokens: 98,
      temperature: 0.6,
      top_p: 0.9,
      stop_token_ids: [7],
      logprobs: 2,
      stream: true,
      return_token_ids: true,
    });
    expect(body).not.toHaveProperty("messages");
  });

  it("carries the stop strings on and counts min_tokens from what was generated", () => {
    const body = continuationBody(
      { ...plain, stop: ["END"], include_stop_str_in_output: false, min_tokens: 3 },
      [1],
      [4, 5],
    );
    expect(body).toMatchObject({ stop: ["END"], include_stop_str_in_output: false, min_tokens: 1 });
    expect(continuationBody({ ...plain, min_tokens: 1 }, [1], [4, 5]).min_tokens).toBe(0);
  });
});
