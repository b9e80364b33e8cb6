import { describe, expect, it } from "vitest";
import { tokenStrip } from "../../../functions/dashboard/components/token-strip";
import { LlmCall, type LlmCallInput } from "../../../src/schemas/llm-call";
import { buildTrainingSamples } from "../../../src/training/sample-builder";

function call(
  id: string,
  prompt: number[],
  completion: number[],
  version: number,
  strs?: string[],
): LlmCall {
  const input: LlmCallInput = {
    ...(strs ? { completion_token_strs: strs } : {}),
    call_id: id,
    rollout_id: "r",
    request: {},
    response_message: { role: "assistant", content: "x" },
    prompt_token_ids: prompt,
    completion_token_ids: completion,
    logprobs: completion.map((_, i) => -0.25 * (i + 1)),
    logprobs_mode: "processed_logprobs",
    finish_reason: "stop",
    usage: {
      prompt_tokens: prompt.length,
      completion_tokens: completion.length,
      total_tokens: prompt.length + completion.length,
    },
    backend: "vllm",
    replica: "http://sim/v1",
    policy_version_start: version,
    policy_version_end: version,
    latency_ms: 1,
    trainable: true,
    created_at: 0,
  };
  return LlmCall.parse(input);
}

async function render(
  calls: LlmCall[],
  termination: "ENV_DONE" | "MAX_RESPONSE_LENGTH",
  texts: ReadonlyMap<string, readonly string[]> = new Map(),
) {
  const { samples } = buildTrainingSamples({
    rollout_id: "r",
    status: "succeeded",
    termination_reason: termination,
    reward: 1,
    calls,
    uid: "g",
    sample_index: 0,
    mode: "cumulative",
  });
  const byId = new Map(calls.map((c) => [c.call_id, c]));
  const numbers = new Map(calls.map((c, i) => [c.call_id, i + 1]));
  return Promise.all(
    samples.map(async (sample) => ({
      sample,
      html: String(await tokenStrip(sample, byId, numbers, texts)),
    })),
  );
}

const attr = (html: string, name: string) =>
  [...html.matchAll(new RegExp(`class="t"[^>]* ${name}="([^"]*)"`, "g"))].map((m) => m[1]);

describe("tokenStrip (unit)", () => {
  it("renders one element per response token with the sample's mask and logprob, and each call's policy version", async () => {
    // call 2's prompt extends call 1's prompt + completion by two tokens of tool output (mask 0)
    const [only, ...rest] = await render(
      [call("a", [1, 2, 3], [10, 11], 4), call("b", [1, 2, 3, 10, 11, 50, 51], [12], 5)],
      "ENV_DONE",
    );
    expect(rest).toHaveLength(0);
    expect(attr(only!.html, "data-mask")).toEqual(["1", "1", "0", "0", "1"]);
    expect(attr(only!.html, "data-logprob").map(Number)).toEqual([-0.25, -0.5, 0, 0, -0.25]);
    expect([...only!.html.matchAll(/data-policy-version="(\d+)"/g)].map((m) => m[1])).toEqual([
      "4",
      "5",
    ]);
    expect(only!.html).not.toContain("data-drift-split");
    expect(only!.html).not.toContain("data-truncated-by");
  });

  it("shows a model token as the engine's text of it, and a context token as its id", async () => {
    const [only] = await render(
      [
        call("a", [1, 2, 3], [10, 11], 0, ["Hi", " there\n"]),
        call("b", [1, 2, 3, 10, 11, 50], [12], 0),
      ],
      "ENV_DONE",
    );
    const texts = [...only!.html.matchAll(/class="t"[^>]*>([^<]*)</g)].map((m) => m[1]);
    expect(texts).toEqual(["Hi", "\u00b7there\u21b5", "50", "12"]);
    expect(attr(only!.html, "data-id")).toEqual(["10", "11", "50", "12"]);
  });

  it("carries each model token's engine text in data-token-text, marks special tokens and parts of a UTF-8 character", async () => {
    const strs = ["<think>", "\n", "caf", "\uFFFD", "\uFFFD", '"x" & <y>', "<|im_end|>"];
    const [only] = await render(
      [
        call("a", [1, 2, 3], [10, 11, 12, 13, 14, 15, 16], 0, strs),
        call("b", [1, 2, 3, 10, 11, 12, 13, 14, 15, 16, 50], [17], 0),
      ],
      "ENV_DONE",
    );
    const tags = [...only!.html.matchAll(/<span class="(t[^"]*)"([^>]*)>/g)];
    const unescape = (value: string) =>
      value
        .replace(/&quot;/g, '"')
        .replace(/&lt;/g, "<")
        .replace(/&gt;/g, ">")
        .replace(/&amp;/g, "&");
    const texts = tags.map((m) => / data-token-text="([^"]*)"/.exec(m[2]!)?.[1]);
    expect(texts.map((t) => (t === undefined ? null : unescape(t)))).toEqual([...strs, null, null]);
    expect(tags.map((m) => m[1])).toEqual([
      "t special",
      "t",
      "t",
      "t bytes",
      "t bytes",
      "t",
      "t special",
      "t",
      "t",
    ]);
    expect(only!.html).toContain("part of a UTF-8 character (bytes)");
  });

  it("shows the prompt and the context tokens between calls with the texts of the last call's prompt", async () => {
    const calls = [
      call("a", [1, 2, 3], [10, 11], 0, ["Hi", "!"]),
      call("b", [1, 2, 3, 10, 11, 50, 51], [12], 0, ["ok"]),
    ];
    const lastPrompt = ["<|im_start|>", "user", "\n", "Hi", "!", "<|im_end|>", " x"];
    const [only] = await render(calls, "ENV_DONE", new Map([["b", lastPrompt]]));
    const prompt = [
      ...only!.html.matchAll(
        /<span class="(p[^"]*)" data-k="\d+" data-id="(\d+)" data-token-text="([^"]*)"/g,
      ),
    ];
    expect(prompt.map((m) => [m[1], m[2], m[3]])).toEqual([
      ["p special", "1", "&lt;|im_start|&gt;"],
      ["p", "2", "user"],
      ["p", "3", "\n"],
    ]);
    const context = [
      ...only!.html.matchAll(
        /<span class="(t[^"]*)"[^>]* data-id="(\d+)" data-mask="0"[^>]* data-token-text="([^"]*)"[^>]*>([^<]*)</g,
      ),
    ];
    expect(context.map((m) => [m[1], m[2], m[3], m[4]])).toEqual([
      ["t special", "50", "&lt;|im_end|&gt;", "&lt;|im_end|&gt;"],
      ["t", "51", " x", "\u00b7x"],
    ]);
  });

  it("shows context tokens as ids when no prompt texts are known", async () => {
    const [only] = await render(
      [call("a", [1, 2, 3], [10, 11], 0, ["Hi", "!"]), call("b", [1, 2, 3, 10, 11, 50], [12], 0)],
      "ENV_DONE",
    );
    expect(only!.html).toMatch(
      /<span class="p" data-k="0" data-id="1" title="token 1 · prompt \(not trained\)">1<\/span>/,
    );
    expect(only!.html).toMatch(
      /<span class="t" data-i="2" data-id="50" data-mask="0" data-logprob="0" title="[^"]*">50<\/span>/,
    );
  });

  it("marks the sample after a drift split and a truncated ending", async () => {
    // call 2's prompt rewrites history (a stripped <think>): a new sample starts
    const samples = await render(
      [call("a", [1, 2, 3], [10, 11], 0), call("b", [1, 2, 9], [12, 13], 0)],
      "MAX_RESPONSE_LENGTH",
    );
    expect(samples.map((s) => s.sample.segment_index)).toEqual([0, 1]);
    expect(samples[0]!.html).not.toContain("data-drift-split");
    expect(samples[1]!.html).toContain('data-drift-split="1"');
    expect(samples[1]!.html).toContain('data-truncated-by="MAX_RESPONSE_LENGTH"');
    expect(attr(samples[1]!.html, "data-mask")).toEqual(["1", "1"]);
  });
});
