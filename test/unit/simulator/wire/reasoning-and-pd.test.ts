/**
 * Wire compatibility with vLLM, part 1: the reasoning parser and prefill/decode handles. Written
 * from vLLM's own sources (vllm-project/vllm, read file by file):
 * - vllm/entrypoints/openai/chat_completion/protocol.py @ d5dba2d7b0ab9b98096560c69db7126b54b14d79
 *   (ChatMessage: `reasoning` only; ChatCompletionStreamResponse: no kv_transfer_params)
 * - vllm/entrypoints/openai/engine/protocol.py @ d7e52523a55cfd60207c99d9f3b7ed527d2115b7
 *   (DeltaMessage copies `reasoning` into the deprecated `reasoning_content`)
 * - vllm/entrypoints/openai/chat_completion/serving.py @ 5e918640d7b65820db5beaa98c2a99925bff7c17
 *   (chat_completion_full_generator: reasoning_parser.extract_reasoning, include_reasoning)
 * - vllm/distributed/kv_transfer/kv_connector/v1/nixl/scheduler.py @ c8fac58bfd9fa6b2935b9d71675f0ca79db9850f
 *   (request_finished's params; update_state_after_alloc runs a request with incomplete params locally)
 * and PRs #27752 (`reasoning`), #33402 (`reasoning_content` removed).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EOS_TOKEN_ID, type VllmSimulator, startVllmSimulator } from "../../../../tools/simulator";
import { jsonChunks, postJson, postSse } from "../simulator-fixtures";

const MATH = {
  messages: [{ role: "user", content: "What is 6 * 7?" }],
  seed: 4,
  return_token_ids: true,
};
const PREFILL = {
  do_remote_decode: true,
  do_remote_prefill: false,
  remote_engine_id: null,
  remote_block_ids: null,
  remote_host: null,
  remote_port: null,
};
const reasoningKeys = (object: Record<string, unknown>) =>
  Object.keys(object)
    .filter((key) => key.startsWith("reasoning"))
    .sort();

describe("vLLM wire: reasoning parser", () => {
  let sim: VllmSimulator;
  let url: string;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, seed: 1, thinking: true, reasoningParser: true });
    url = `${sim.url}/v1/chat/completions`;
  });
  afterAll(() => sim.close());

  it("puts the think block in message.reasoning, not in content, and counts its tokens in usage", async () => {
    const { status, body } = await postJson(url, MATH);
    expect(status).toBe(200);
    const message = body.choices[0].message;
    expect(reasoningKeys(message)).toEqual(["reasoning"]);
    expect(message.reasoning).toBe("I need to evaluate 6 * 7.");
    expect(message.content).toMatch(/^\n6 \* 7 = -?\d+, so the answer is \\boxed\{-?\d+\}$/);
    // <think>, the thought's tokens, </think>: all sampled, all reported as reasoning tokens.
    expect(body.usage.completion_tokens_details.reasoning_tokens).toBeGreaterThan(2);
    expect(body.usage.completion_tokens_details.reasoning_tokens).toBeLessThan(
      body.usage.completion_tokens,
    );
  });

  it("streams the thought as reasoning deltas before any content, reassembling the whole answer", async () => {
    const whole = (await postJson(url, MATH)).body.choices[0].message;
    const chunks = jsonChunks(await postSse(url, { ...MATH, stream: true }));
    const deltas = chunks.flatMap((chunk) =>
      chunk.choices.map((choice: { delta: Record<string, string> }) => choice.delta),
    );
    const firstContent = deltas.findIndex((delta) => delta.content);
    const lastReasoning =
      deltas.length - 1 - [...deltas].reverse().findIndex((delta) => delta.reasoning);
    expect(lastReasoning).toBeLessThan(firstContent);
    expect(deltas.map((delta) => delta.reasoning ?? "").join("")).toBe(whole.reasoning);
    expect(deltas.map((delta) => delta.content ?? "").join("")).toBe(whole.content);
    expect(deltas.some((delta) => "reasoning_content" in delta)).toBe(false);
  });

  it("uses reasoning_content before vLLM PR #27752 and both names in its deprecation window", async () => {
    for (const [field, keys] of [
      ["reasoning_content", ["reasoning_content"]],
      ["both", ["reasoning", "reasoning_content"]],
    ] as const) {
      sim.configure({ compat: { reasoningField: field } });
      const message = (await postJson(url, MATH)).body.choices[0].message;
      const deltas = jsonChunks(await postSse(url, { ...MATH, stream: true })).flatMap((c) =>
        c.choices.map((choice: { delta: Record<string, unknown> }) => choice.delta),
      );
      expect(reasoningKeys(message)).toEqual(keys);
      expect(keys.map((key) => message[key])).toEqual(keys.map(() => "I need to evaluate 6 * 7."));
      expect(reasoningKeys(deltas.find((delta) => reasoningKeys(delta).length > 0)!)).toEqual(keys);
    }
    sim.configure({ compat: { reasoningField: "reasoning" } });
  });

  it("drops the reasoning for include_reasoning: false, and leaves <think> in content without a parser", async () => {
    const hidden = (await postJson(url, { ...MATH, include_reasoning: false })).body.choices[0]
      .message;
    expect(hidden.reasoning).toBeNull();
    expect(hidden.content).not.toContain("<think>");
    sim.configure({ reasoningParser: false });
    const plain = (await postJson(url, MATH)).body;
    sim.configure({ reasoningParser: true });
    expect(plain.choices[0].message.content).toMatch(
      /^<think>I need to evaluate 6 \* 7\.<\/think>\n/,
    );
    expect(plain.choices[0].message.reasoning).toBeNull();
    expect(plain.usage).not.toHaveProperty("completion_tokens_details");
  });
});

describe("vLLM wire: prefill/decode handles (NixlConnector)", () => {
  let prefill: VllmSimulator;
  let decode: VllmSimulator;
  const chatUrl = (sim: VllmSimulator) => `${sim.url}/v1/chat/completions`;
  const prefillLeg = (extra: Record<string, unknown> = {}) => ({
    ...MATH,
    max_tokens: 1,
    kv_transfer_params: PREFILL,
    ...extra,
  });
  beforeAll(async () => {
    prefill = await startVllmSimulator({ port: 0, seed: 1, role: "prefill" });
    decode = await startVllmSimulator({ port: 0, seed: 2, role: "decode" });
  });
  afterAll(() => Promise.all([prefill.close(), decode.close()]));

  it("hands off request_finished's params: remote_request_id, one block list per KV-cache group, remote_num_tokens", async () => {
    prefill.configure({ compat: { kvCacheGroups: 2 } });
    const { body } = await postJson(chatUrl(prefill), prefillLeg(), { "x-request-id": "pd-7" });
    prefill.configure({ compat: { kvCacheGroups: 1 } });
    const params = body.kv_transfer_params;
    expect(Object.keys(params).sort()).toEqual([
      "do_remote_decode",
      "do_remote_prefill",
      "remote_block_ids",
      "remote_engine_id",
      "remote_host",
      "remote_num_tokens",
      "remote_port",
      "remote_request_id",
      "tp_size",
    ]);
    expect(params).toMatchObject({
      do_remote_prefill: true,
      do_remote_decode: false,
      remote_request_id: "chatcmpl-pd-7",
      remote_num_tokens: body.prompt_token_ids.length,
    });
    expect(params.remote_block_ids).toHaveLength(2);
    expect(params.remote_block_ids[0]).not.toEqual(params.remote_block_ids[1]);
    const decoded = await postJson(chatUrl(decode), { ...MATH, kv_transfer_params: params });
    expect(decoded.status).toBe(200);
  });

  it("answers kv_transfer_params: null when the one-token prefill stops on EOS; the decode server then computes it (200)", async () => {
    prefill.configure({ emptyReplyRate: 1 });
    const eos = await postJson(chatUrl(prefill), prefillLeg());
    prefill.configure({ compat: { prefillEosParams: "params" } });
    const newer = await postJson(chatUrl(prefill), prefillLeg());
    prefill.configure({ emptyReplyRate: 0, compat: { prefillEosParams: "null" } });
    expect(eos.body.choices[0]).toMatchObject({ finish_reason: "stop", token_ids: [EOS_TOKEN_ID] });
    expect(eos.body.kv_transfer_params).toBeNull();
    expect(newer.body.kv_transfer_params).toMatchObject({ do_remote_prefill: true });
    const before = decode.stats().pd;
    const recomputed = await postJson(chatUrl(decode), {
      ...MATH,
      kv_transfer_params: eos.body.kv_transfer_params,
    });
    expect(recomputed.status).toBe(200);
    expect(recomputed.body.choices[0].token_ids.length).toBeGreaterThan(1);
    expect(decode.stats().pd).toMatchObject({
      recomputed: before.recomputed + 1,
      decode: before.decode,
    });
  });

  it("serves a streamed prefill leg (no handle can ride on the chunks) and runs incomplete params locally", async () => {
    const events = await postSse(chatUrl(prefill), prefillLeg({ stream: true }));
    expect(events.at(-1)).toBe("[DONE]");
    expect(jsonChunks(events).every((chunk) => !("kv_transfer_params" in chunk))).toBe(true);
    const { body } = await postJson(chatUrl(prefill), prefillLeg());
    const { remote_request_id: _dropped, ...incomplete } = body.kv_transfer_params;
    const before = decode.stats().pd.recomputed;
    expect(
      (await postJson(chatUrl(decode), { ...MATH, kv_transfer_params: incomplete })).status,
    ).toBe(200);
    expect(decode.stats().pd.recomputed).toBe(before + 1);
  });

  it("reports one flat block list under compat.blockIdsLayout: flat (older connectors), which a decode server accepts", async () => {
    prefill.configure({ compat: { blockIdsLayout: "flat" } });
    const { body } = await postJson(chatUrl(prefill), prefillLeg());
    prefill.configure({ compat: { blockIdsLayout: "per-group" } });
    expect(
      body.kv_transfer_params.remote_block_ids.every((id: unknown) => Number.isInteger(id)),
    ).toBe(true);
    expect(
      (await postJson(chatUrl(decode), { ...MATH, kv_transfer_params: body.kv_transfer_params }))
        .status,
    ).toBe(200);
  });
});
