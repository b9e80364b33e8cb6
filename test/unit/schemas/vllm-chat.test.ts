import { describe, expect, it } from "vitest";
import { VllmChatCompletion } from "../../../src/schemas/vllm-chat";

/** A vLLM reply with `return_token_ids` and logprobs, as the engine sends it. */
function reply(
  overrides: { prompt_token_ids?: unknown; token_ids?: unknown; content?: unknown } = {},
) {
  return {
    id: "chatcmpl-1",
    model: "m",
    prompt_token_ids: "prompt_token_ids" in overrides ? overrides.prompt_token_ids : [1, 2, 3],
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: "hi" },
        logprobs: {
          content:
            "content" in overrides
              ? overrides.content
              : [{ token: "hi", logprob: -0.5, bytes: [104, 105], top_logprobs: [] }],
        },
        finish_reason: "stop",
        token_ids: "token_ids" in overrides ? overrides.token_ids : [7],
      },
    ],
    usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
  };
}

function refusal(raw: unknown): string {
  const parsed = VllmChatCompletion.safeParse(raw);
  if (parsed.success) throw new Error("accepted");
  return parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ");
}

describe("VllmChatCompletion", () => {
  it("accepts vLLM's reply and keeps each logprob entry's other fields as sent", () => {
    const parsed = VllmChatCompletion.parse(reply());
    expect(parsed.prompt_token_ids).toEqual([1, 2, 3]);
    expect(parsed.choices[0]!.token_ids).toEqual([7]);
    expect(parsed.choices[0]!.logprobs!.content).toEqual([
      { token: "hi", logprob: -0.5, bytes: [104, 105], top_logprobs: [] },
    ]);
  });

  it("accepts a plain OpenAI-compatible reply without token ids or logprobs", () => {
    expect(
      VllmChatCompletion.safeParse(
        reply({ prompt_token_ids: null, token_ids: undefined, content: null }),
      ).success,
    ).toBe(true);
  });

  it("refuses token ids that are not non-negative integers, naming the field", () => {
    expect(refusal(reply({ prompt_token_ids: [1, 2.5] }))).toMatch(
      /^prompt_token_ids: .*non-negative integer token ids/,
    );
    expect(refusal(reply({ token_ids: [-1] }))).toMatch(/^choices\.0\.token_ids: /);
    expect(refusal(reply({ token_ids: "7" }))).toMatch(/^choices\.0\.token_ids: /);
  });

  it("refuses a logprob entry without a token or a numeric logprob, naming the field", () => {
    expect(refusal(reply({ content: [{ token: "hi" }] }))).toMatch(
      /^choices\.0\.logprobs\.content: /,
    );
    expect(refusal(reply({ content: [{ token: "hi", logprob: "-0.5" }] }))).toMatch(
      /^choices\.0\.logprobs\.content: /,
    );
    expect(refusal(reply({ content: [null] }))).toMatch(/^choices\.0\.logprobs\.content: /);
  });
});
