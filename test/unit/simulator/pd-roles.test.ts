import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type VllmSimulator, startVllmSimulator } from "../../../tools/simulator";
import { postJson, postSse } from "./simulator-fixtures";

const CHAT = {
  messages: [
    { role: "system", content: "Be brief." },
    { role: "user", content: "What is 12 * 12?" },
  ],
  max_tokens: 24,
  seed: 7,
  return_token_ids: true,
  logprobs: true,
  top_logprobs: 0,
};
const PREFILL_PARAMS = {
  do_remote_decode: true,
  do_remote_prefill: false,
  remote_engine_id: null,
  remote_block_ids: null,
  remote_host: null,
  remote_port: null,
};

/** The prefill leg as vLLM's disagg proxy sends it. */
const prefillLeg = (body: Record<string, unknown>) => ({
  ...body,
  max_tokens: 1,
  stream: false,
  kv_transfer_params: PREFILL_PARAMS,
});

describe("vLLM simulator prefill/decode roles", () => {
  let prefill: VllmSimulator;
  let decode: VllmSimulator;
  let chatUrl: (sim: VllmSimulator) => string;
  beforeAll(async () => {
    prefill = await startVllmSimulator({ port: 0, seed: 1, role: "prefill" });
    decode = await startVllmSimulator({ port: 0, seed: 2, role: "decode" });
    chatUrl = (sim) => `${sim.url}/v1/chat/completions`;
  });
  afterAll(() => Promise.all([prefill.close(), decode.close()]));

  it("answers the prefill leg with one token and a kv_transfer_params handle naming this engine", async () => {
    const reply = await postJson(chatUrl(prefill), prefillLeg(CHAT));
    expect(reply.status).toBe(200);
    expect(reply.body.choices[0].token_ids).toHaveLength(1);
    const params = reply.body.kv_transfer_params;
    const promptTokens = reply.body.prompt_token_ids.length;
    expect(params).toMatchObject({
      do_remote_prefill: true,
      do_remote_decode: false,
      remote_host: "127.0.0.1",
      remote_port: prefill.port,
      tp_size: 1,
      remote_num_tokens: promptTokens,
    });
    expect(params.remote_engine_id).toMatch(/^sim-/);
    // The engine request id the decode side names in its transfer: the prefill's response id.
    expect(params.remote_request_id).toBe(reply.body.id);
    // One list per KV-cache group, one block id per 16 prompt tokens, as vLLM's NixlConnector reports them.
    expect(params.remote_block_ids).toHaveLength(1);
    expect(params.remote_block_ids[0]).toHaveLength(Math.ceil(promptTokens / 16));
    expect(
      params.remote_block_ids[0].every(
        (id: unknown) => Number.isInteger(id) && (id as number) >= 0,
      ),
    ).toBe(true);
    expect(prefill.stats().pd.prefill).toBeGreaterThanOrEqual(1);
  });

  it("refuses a plain request on a prefill server, and serves a streamed prefill leg without a handle", async () => {
    const before = prefill.stats();
    const plain = await postJson(chatUrl(prefill), CHAT);
    expect(plain).toMatchObject({
      status: 400,
      body: { error: { type: "BadRequestError", param: "kv_transfer_params", code: 400 } },
    });
    const events = await postSse(chatUrl(prefill), { ...prefillLeg(CHAT), stream: true });
    expect(events.at(-1)).toBe("[DONE]");
    // Stream chunks have no kv_transfer_params field (ChatCompletionStreamResponse), so a proxy gets no handle.
    expect(events.slice(0, -1).some((event) => "kv_transfer_params" in JSON.parse(event))).toBe(
      false,
    );
    expect(
      events.slice(0, -1).flatMap((event) => JSON.parse(event).choices[0]?.token_ids ?? []),
    ).toHaveLength(1);
    expect(prefill.stats().pd.rejected - before.pd.rejected).toBe(1);
    expect(prefill.stats().pd.prefill - before.pd.prefill).toBe(1);
  });

  it("generates on a decode server from a genuine handle, unstreamed and streamed alike", async () => {
    const { body: handle } = await postJson(chatUrl(prefill), prefillLeg(CHAT));
    const decodeLeg = { ...CHAT, kv_transfer_params: handle.kv_transfer_params };
    const reply = await postJson(chatUrl(decode), decodeLeg);
    expect(reply.status).toBe(200);
    const ids: number[] = reply.body.choices[0].token_ids;
    expect(ids.length).toBeGreaterThan(1);
    expect(reply.body.choices[0].logprobs.content).toHaveLength(ids.length);
    expect(reply.body.kv_transfer_params).toBeNull();

    const events = await postSse(chatUrl(decode), { ...decodeLeg, stream: true });
    expect(events.at(-1)).toBe("[DONE]");
    const streamedIds = events
      .slice(0, -1)
      .flatMap((event) => JSON.parse(event).choices[0]?.token_ids ?? []);
    expect(streamedIds).toEqual(ids);
    expect(decode.stats().pd.decode).toBeGreaterThanOrEqual(2);
  });

  it("rejects a forged or other prompt's handle, or a prefill leg, on a decode server (400 naming kv_transfer_params)", async () => {
    const { body: other } = await postJson(
      chatUrl(prefill),
      prefillLeg({ ...CHAT, messages: [{ role: "user", content: "What is 2 + 2?" }] }),
    );
    const before = decode.stats();
    const forged = {
      do_remote_prefill: true,
      do_remote_decode: false,
      remote_engine_id: "sim-forged",
      remote_request_id: "x",
      remote_block_ids: [[1, 2]],
      remote_host: "127.0.0.1",
      remote_port: 1,
      tp_size: 1,
    };
    const cases: Array<Record<string, unknown>> = [
      { ...CHAT, kv_transfer_params: forged },
      { ...CHAT, kv_transfer_params: other.kv_transfer_params },
      { ...CHAT, kv_transfer_params: PREFILL_PARAMS },
    ];
    for (const body of cases) {
      const reply = await postJson(chatUrl(decode), body);
      expect(reply, JSON.stringify(body.kv_transfer_params ?? null)).toMatchObject({
        status: 400,
        body: { error: { param: "kv_transfer_params", code: 400 } },
      });
    }
    expect(decode.stats().pd.rejected - before.pd.rejected).toBe(cases.length);
    expect(decode.stats().completions).toBe(before.completions);
  });

  it("runs the same handshake on /v1/completions", async () => {
    const body = {
      prompt: "The answer to 6 * 7 is",
      max_tokens: 8,
      seed: 3,
      return_token_ids: true,
    };
    const handle = await postJson(`${prefill.url}/v1/completions`, prefillLeg(body));
    expect(handle.body.kv_transfer_params).toMatchObject({ do_remote_prefill: true });
    const reply = await postJson(`${decode.url}/v1/completions`, {
      ...body,
      kv_transfer_params: handle.body.kv_transfer_params,
    });
    expect(reply.status).toBe(200);
    expect(reply.body.choices[0].token_ids.length).toBeGreaterThan(0);
  });
});

describe("vLLM simulator role setting", () => {
  it("changes role through PUT /sim/config, and a both-role server ignores kv_transfer_params", async () => {
    const sim = await startVllmSimulator({ port: 0, seed: 4 });
    const forged = {
      do_remote_prefill: true,
      remote_engine_id: "sim-forged",
      remote_block_ids: [9],
    };
    const both = await postJson(`${sim.url}/v1/chat/completions`, {
      ...CHAT,
      kv_transfer_params: forged,
    });
    const put = await fetch(`${sim.url}/sim/config`, {
      method: "PUT",
      body: JSON.stringify({ role: "decode" }),
    });
    const asDecode = await postJson(`${sim.url}/v1/chat/completions`, CHAT);
    const bad = await fetch(`${sim.url}/sim/config`, {
      method: "PUT",
      body: JSON.stringify({ role: "middle" }),
    });
    await sim.close();
    expect(both).toMatchObject({ status: 200, body: { kv_transfer_params: null } });
    expect(put.status).toBe(200);
    expect(((await put.json()) as { role: string }).role).toBe("decode");
    // Without a handle a decode server computes the prefill itself, as vLLM's does.
    expect(asDecode).toMatchObject({ status: 200, body: { kv_transfer_params: null } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain("role");
  });

  it("rejects an unknown role at start, naming the field", async () => {
    await expect(startVllmSimulator({ port: 0, role: "middle" as never })).rejects.toThrow(/role/);
  });
});
