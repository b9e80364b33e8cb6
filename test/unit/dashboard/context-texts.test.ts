import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contextTexts } from "../../../functions/dashboard/context-texts";
import { LlmCall, type LlmCallInput } from "../../../src/schemas/llm-call";
import { buildTrainingSamples } from "../../../src/training/sample-builder";
import { type VllmSimulator, startVllmSimulator } from "../../../tools/simulator";
import { postJson } from "../simulator/simulator-fixtures";

function call(id: string, replica: string, prompt: number[], completion: number[]): LlmCall {
  const input: LlmCallInput = {
    call_id: id,
    rollout_id: "r",
    request: {},
    response_message: { role: "assistant", content: "x" },
    prompt_token_ids: prompt,
    completion_token_ids: completion,
    logprobs: completion.map(() => -0.5),
    logprobs_mode: "processed_logprobs",
    finish_reason: "stop",
    usage: {
      prompt_tokens: prompt.length,
      completion_tokens: completion.length,
      total_tokens: prompt.length + completion.length,
    },
    backend: "vllm",
    replica,
    policy_version_start: 0,
    policy_version_end: 0,
    latency_ms: 1,
    trainable: true,
    created_at: 0,
  };
  return LlmCall.parse(input);
}

describe("contextTexts (unit, vLLM simulator on loopback)", () => {
  let sim: VllmSimulator;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, tokenizer: "qwen3" });
  });
  afterAll(() => sim.close());

  it("asks the call's server once per call, sends the deployment's key only to the deployment's server", async () => {
    const ids = (
      await postJson(`${sim.url}/tokenize`, {
        messages: [{ role: "user", content: "Hi there" }],
        add_generation_prompt: true,
      })
    ).body.tokens as number[];
    // The same server under another name: not the deployment's LLM_BASE_URL, so no key goes there.
    const other = sim.url.replace("127.0.0.1", "localhost");
    const calls = [
      call(`own-${process.pid}`, `${sim.url}/v1`, ids, [5]),
      call(`other-${process.pid}`, `${other}/v1`, ids, [5]),
    ];
    const byId = new Map(calls.map((c) => [c.call_id, c]));
    const samples = calls.map(
      (c) =>
        buildTrainingSamples({
          rollout_id: "r",
          status: "succeeded",
          termination_reason: "ENV_DONE",
          reward: 1,
          calls: [c],
          uid: "g",
          sample_index: 0,
          mode: "cumulative",
        }).samples[0]!,
    );
    const seen: Array<[string, string | null]> = [];
    const recording: typeof fetch = (input, init) => {
      seen.push([String(input), new Headers(init?.headers).get("authorization")]);
      return fetch(input, init);
    };
    const server = { baseUrl: `${sim.url}/v1/`, apiKey: "k" };
    const texts = await contextTexts(samples, byId, server, recording);
    expect(texts.get(calls[0]!.call_id)?.join("")).toBe(
      (await postJson(`${sim.url}/detokenize`, { tokens: ids })).body.prompt,
    );
    expect(texts.get(calls[1]!.call_id)).toEqual(texts.get(calls[0]!.call_id));
    expect(seen.sort()).toEqual(
      [
        [`${other}/detokenize`, null],
        [`${other}/tokenize`, null],
        [`${sim.url}/detokenize`, "Bearer k"],
        [`${sim.url}/tokenize`, "Bearer k"],
      ].sort(),
    );
    await contextTexts(samples, byId, server, recording);
    expect(seen).toHaveLength(4);
  });
});
