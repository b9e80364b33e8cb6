import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type VllmSimulator, startVllmSimulator } from "../../../tools/simulator";
import { PrefixCache } from "../../../tools/simulator/prefix-cache";
import { postJson } from "./simulator-fixtures";

const ids = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

describe("PrefixCache", () => {
  it("hits the whole blocks of a shared prefix, always computing the last prompt token", () => {
    const cache = new PrefixCache({ blockSize: 4, capacityBlocks: 100 });
    expect(cache.admit(ids(10, 10))).toEqual({ hitTokens: 0, missTokens: 10 });
    expect(cache.admit([...ids(10, 9), 99, 98])).toEqual({ hitTokens: 8, missTokens: 3 });
    // Fully cached 8 tokens: the second block holds the last token, so only the first one hits.
    expect(cache.admit(ids(10, 8))).toEqual({ hitTokens: 4, missTokens: 4 });
    expect(cache.admit([1, ...ids(10, 9)])).toEqual({ hitTokens: 0, missTokens: 10 });
  });

  it("shares no block across salts and evicts least recently used blocks beyond its capacity", () => {
    const cache = new PrefixCache({ blockSize: 4, capacityBlocks: 4 });
    cache.admit(ids(0, 13), "policy-v1");
    expect(cache.admit(ids(0, 13), "policy-v2").hitTokens).toBe(0);
    expect(cache.admit(ids(0, 13), "policy-v2").hitTokens).toBe(12);
    expect(cache.size).toBe(4);
    expect(cache.evicted).toBeGreaterThan(0);
    // v2's blocks pushed out v1's tail blocks; its head survives, as tails are evicted first.
    expect(cache.admit(ids(0, 13), "policy-v1").hitTokens).toBe(4);
  });
});

describe("the simulator's prefix cache and load", () => {
  let sim: VllmSimulator;
  const long = Array.from({ length: 300 }, (_, i) => `fact ${i * 7919} holds`).join("; ");
  const chat = (user: string, extra: Record<string, unknown> = {}) => ({
    messages: [
      { role: "system", content: long },
      { role: "user", content: user },
    ],
    max_tokens: 8,
    include_metrics: true,
    ...extra,
  });
  beforeAll(async () => {
    sim = await startVllmSimulator({
      port: 0,
      perRequestMetrics: true,
      latency: { ttftMs: 0, perTokenMs: 2 },
      prefixCache: { prefillMsPer1kTokens: 10, decodeSlowdown: 0.5 },
    });
  });
  afterAll(() => sim.close());
  const post = (body: unknown) => postJson(`${sim.url}/v1/chat/completions`, body);

  it("prefills only the uncached tokens, counts hits and misses in /metrics, and keeps salts apart", async () => {
    const started = Date.now();
    const cold = (await post(chat("first question"))).body;
    const prompt = cold.usage.prompt_tokens as number;
    expect(prompt).toBeGreaterThan(1000);
    // The first token comes from the step that prefills the prompt and samples (2 ms per token).
    expect(cold.metrics.time_to_first_token_ms).toBeCloseTo((prompt * 10) / 1000 + 2, 5);
    expect(Date.now() - started).toBeGreaterThanOrEqual(Math.floor((prompt * 10) / 1000) - 1);
    const warm = (await post(chat("second question"))).body;
    expect(warm.metrics.time_to_first_token_ms).toBeLessThan(
      cold.metrics.time_to_first_token_ms / 10,
    );
    const salted = (await post(chat("second question", { cache_salt: "policy-v1" }))).body;
    expect(salted.metrics.time_to_first_token_ms).toBeCloseTo(
      cold.metrics.time_to_first_token_ms,
      0,
    );

    const metrics = await (await fetch(`${sim.url}/metrics`)).text();
    const counter = (name: string) =>
      Number(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, "m").exec(metrics)?.[1]);
    const { replica } = sim.stats();
    expect(counter("vllm:prefix_cache_queries_total")).toBe(replica!.prefixCacheQueries);
    expect(counter("vllm:prefix_cache_hits_total")).toBe(replica!.prefixCacheHits);
    expect(replica!.prefixCacheQueries).toBe(
      prompt + warm.usage.prompt_tokens + salted.usage.prompt_tokens,
    );
    expect(replica!.prefixCacheHits).toBeGreaterThan(prompt - 50);
    expect(replica!.prefixCacheHits).toBeLessThan(prompt + 50);
    expect((await post(chat("x", { cache_salt: "" }))).status).toBe(400);
  });

  it("slows every decode step by decodeSlowdown per other sequence in it", async () => {
    const arrived = () => sim.stats().byEndpoint["POST /v1/chat/completions"] ?? 0;
    const before = arrived();
    const release = sim.holdGenerations();
    const replies = [post(chat("a")), post(chat("b"))];
    while (arrived() < before + 2) await new Promise((resolve) => setTimeout(resolve, 5));
    release();
    const itl = (await Promise.all(replies))
      .map((reply) => reply.body.metrics.mean_itl_ms as number)
      .sort();
    // Steps that decode both take 2 x 1.5 = 3 ms (one also prefills the other's few uncached
    // tokens); the longer answer's last steps run alone (2 ms).
    expect(itl[0]).toBeGreaterThan(2);
    expect(itl[0]).toBeLessThanOrEqual(itl[1]!);
    expect(itl[1]).toBeGreaterThanOrEqual(3);
    expect(itl[1]).toBeLessThan(3.2);
  });
});
