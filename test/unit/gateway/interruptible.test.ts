/** Unit: which calls an interrupting sync may cut and resume exactly, and which it drains. */
import { describe, expect, it } from "vitest";
import { continuationBody, notInterruptibleBecause } from "../../../src/gateway/interruptible";

const plain = { model: "m", messages: [{ role: "user", content: "hi" }], max_tokens: 100 };

describe("notInterruptibleBecause", () => {
  it("lets plain generation be cut, with or without stop token ids", () => {
    expect(notInterruptibleBecause("/chat/completions", plain)).toBeNull();
    expect(notInterruptibleBecause("/chat/completions", { ...plain, stop_token_ids: [151645], stop: [], temperature: 0.7 })).toBeNull();
  });

  it("drains calls whose resumption would not be exact, naming why", () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ tools: [{ type: "function", function: { name: "f" } }] }, "tools"],
      [{ tool_choice: "required" }, "tool_choice"],
      [{ response_format: { type: "json_object" } }, "response_format"],
      [{ presence_penalty: 0.5 }, "presence_penalty"],
      [{ seed: 7 }, "seed"],
      // A stop string may begin before the cut and end after it, where the continuation cannot see it.
      [{ stop: "\n\n" }, "stop strings"],
      [{ stop: ["</answer>"] }, "stop strings"],
    ];
    for (const [extra, reason] of cases) expect(notInterruptibleBecause("/chat/completions", { ...plain, ...extra } as never)).toBe(reason);
    expect(notInterruptibleBecause("/completions", plain)).toBe("text completions are drained");
  });
});

describe("continuationBody", () => {
  it("continues from prompt + generated ids with the tokens left and the same sampling", () => {
    const body = continuationBody({ ...plain, temperature: 0.6, top_p: 0.9, stop_token_ids: [7], logprobs: true, top_logprobs: 2 }, [1, 2, 3], [4, 5]);
    expect(body).toMatchObject({ prompt: [1, 2, 3, 4, 5], max_tokens: 98, temperature: 0.6, top_p: 0.9, stop_token_ids: [7], logprobs: 2, stream: true, return_token_ids: true });
    expect(body).not.toHaveProperty("messages");
  });
});
