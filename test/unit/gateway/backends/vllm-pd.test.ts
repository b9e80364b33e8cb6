import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backendRegistry, prefillRequestBody } from "../../../../src/gateway/backends";
import type { ModelBackend } from "../../../../src/gateway/model-backend";
import { type VllmSimulator, startVllmSimulator } from "../../../../tools/simulator";
import { chatBody, depsWith, ssePayloads, startScriptedUpstream } from "./backend-fixtures";

interface ChatReply {
  prompt_token_ids: number[];
  choices: Array<{ token_ids: number[]; logprobs: { content: unknown[] } }>;
}

const streamedIds = (payloads: string[]) =>
  payloads.slice(0, -1).flatMap((p) => JSON.parse(p).choices[0]?.token_ids ?? []);

describe("vllm_pd backend against prefill and decode simulators", () => {
  let prefill: VllmSimulator;
  let decodes: VllmSimulator[];
  let backend: ModelBackend;
  const decodeOf = (replica: string) => decodes.find((sim) => `${sim.url}/v1` === replica)!;
  beforeAll(async () => {
    prefill = await startVllmSimulator({ port: 0, seed: 1, role: "prefill" });
    decodes = await Promise.all(
      [2, 2].map((seed) => startVllmSimulator({ port: 0, seed, role: "decode" })),
    );
    backend = backendRegistry.create(
      { name: "vllm_pd", prefill: [prefill.url], decode: decodes.map((sim) => sim.url) },
      depsWith(Date.now),
    );
  });
  afterAll(() => Promise.all([prefill, ...decodes].map((sim) => sim.close())));

  it("prefills one token, then decodes the original request: token ids and logprobs come from the decode server", async () => {
    const body = chatBody("What is 9 * 8?");
    const before = { prefill: prefill.stats(), decodes: decodes.map((sim) => sim.stats()) };
    const { body: raw, replica } = await backend.request("/chat/completions", body, {
      rolloutId: "pd-1",
    });
    const reply = raw as ChatReply;
    const decode = decodeOf(replica);
    const ids = reply.choices[0]!.token_ids;
    expect(ids.length).toBeGreaterThan(1);
    expect(reply.choices[0]!.logprobs.content).toHaveLength(ids.length);
    expect(prefill.stats().pd.prefill - before.prefill.pd.prefill).toBe(1);
    expect(prefill.stats().completionTokens - before.prefill.completionTokens).toBe(1);
    const index = decodes.indexOf(decode);
    expect(decode.stats().pd.decode - before.decodes[index]!.pd.decode).toBe(1);
    expect(decode.stats().completionTokens - before.decodes[index]!.completionTokens).toBe(
      ids.length,
    );
    // The same request served whole by that decode server yields the same tokens.
    decode.configure({ role: "both" });
    const direct = (await (
      await fetch(`${replica}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      })
    ).json()) as ChatReply;
    decode.configure({ role: "decode" });
    expect(direct.choices[0]!.token_ids).toEqual(ids);
  });

  it("streams the decode leg after an unstreamed prefill leg", async () => {
    const body = chatBody("What is 7 * 7?");
    const whole = (
      (await backend.request("/chat/completions", body, { rolloutId: "pd-2" })).body as ChatReply
    ).choices[0]!.token_ids;
    const before = prefill.stats().pd.prefill;
    const { response, replica } = await backend.openStream(
      "/chat/completions",
      { ...body, stream: true, stream_options: { include_usage: true } },
      { rolloutId: "pd-2" },
    );
    const payloads = await ssePayloads(response);
    expect(payloads.at(-1)).toBe("[DONE]");
    expect(streamedIds(payloads)).toEqual(whole);
    expect(prefill.stats().pd.prefill - before).toBe(1);
    expect(backend.health!().find((h) => h.replica === replica)?.in_flight).toBe(0);
  });

  it("keeps each rollout on one decode replica across turns", async () => {
    for (let r = 0; r < 8; r++) {
      let hint: string | null = null;
      for (let t = 0; t < 3; t++) {
        const { replica } = await backend.request(
          "/chat/completions",
          chatBody(`rollout ${r} turn ${t}`),
          { rolloutId: `sticky-${r}`, replicaHint: hint },
        );
        if (hint) expect(replica).toBe(hint);
        hint = replica;
      }
    }
  });

  it("goes on to decode when the prefill returns no kv_transfer_params, and the decode server computes the prefill itself", async () => {
    prefill.configure({ role: "both" });
    const before = decodes.reduce((sum, sim) => sum + sim.stats().pd.recomputed, 0);
    const { body: raw } = await backend.request("/chat/completions", chatBody("no handle"), {
      rolloutId: "pd-3",
    });
    prefill.configure({ role: "prefill" });
    const reply = raw as ChatReply & { kv_transfer_params: unknown };
    expect(reply.choices[0]!.token_ids.length).toBeGreaterThan(1);
    expect(reply.choices[0]!.logprobs.content).toHaveLength(reply.choices[0]!.token_ids.length);
    expect(decodes.reduce((sum, sim) => sum + sim.stats().pd.recomputed, 0) - before).toBe(1);
  });
});

describe("vllm_pd wire protocol", () => {
  it("shapes the prefill leg like vLLM's disagg proxy", () => {
    const body = {
      ...chatBody("x"),
      max_completion_tokens: 64,
      stream: true,
      stream_options: { include_usage: true },
      min_tokens: 4,
    };
    expect(prefillRequestBody(body)).toEqual({
      ...chatBody("x"),
      max_tokens: 1,
      max_completion_tokens: 1,
      stream: false,
      kv_transfer_params: {
        do_remote_decode: true,
        do_remote_prefill: false,
        remote_engine_id: null,
        remote_block_ids: null,
        remote_host: null,
        remote_port: null,
      },
    });
    expect(prefillRequestBody(chatBody("y"))).not.toHaveProperty("max_completion_tokens");
  });

  it("passes the prefill's kv_transfer_params through untouched, with one request id on both legs", async () => {
    const handle = { opaque: "engine-handle", remote_block_ids: [3, 1, 4] };
    const p = await startScriptedUpstream({
      status: 200,
      body: JSON.stringify({ id: "p", kv_transfer_params: handle }),
    });
    const d = await startScriptedUpstream({
      status: 200,
      body: JSON.stringify({ id: "d", choices: [] }),
    });
    const backend = backendRegistry.create(
      { name: "vllm_pd", prefill: [p.url], decode: [d.url], api_key: "k" },
      depsWith(Date.now),
    );
    const body = chatBody("hello", { min_tokens: 2 });
    const reply = await backend.request("/chat/completions", body, { rolloutId: "wire" });
    await Promise.all([p.close(), d.close()]);
    expect(reply).toEqual({
      body: { id: "d", choices: [] },
      text: JSON.stringify({ id: "d", choices: [] }),
      replica: `${d.url}/v1`,
    });
    expect(p.seen[0]).toMatchObject({
      url: "/v1/chat/completions",
      body: prefillRequestBody(body),
    });
    expect(d.seen[0]).toMatchObject({
      url: "/v1/chat/completions",
      body: { ...body, kv_transfer_params: handle },
    });
    expect(d.seen[0]!.headers["x-request-id"]).toBe(p.seen[0]!.headers["x-request-id"]);
    expect(d.seen[0]!.headers.authorization).toBe("Bearer k");
  });
});
