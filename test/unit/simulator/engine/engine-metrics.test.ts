/**
 * The engine over HTTP: `/metrics` under vLLM's names while the KV cache fills and preempts, and
 * tokens streamed as the steps that produce them end.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type VllmSimulator, startVllmSimulator } from "../../../../tools/simulator";
import { postJson } from "../simulator-fixtures";

const metric = (text: string, name: string) =>
  Number(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, "m").exec(text)?.[1]);

describe("the engine's metrics and pacing", () => {
  let sim: VllmSimulator;
  beforeAll(async () => {
    // 12 blocks of 16 tokens: three 60-token answers to ~20-token prompts cannot all fit.
    sim = await startVllmSimulator({
      port: 0,
      tokenizer: "toy",
      prefixCache: { capacityBlocks: 12 },
      engine: {
        costModel: { fixedMs: 4, perSequenceMs: 0, perPrefillTokenMs: 0, perKContextTokensMs: 0 },
      },
    });
  });
  afterAll(() => sim.close());
  const scrape = async () => (await fetch(`${sim.url}/metrics`)).text();

  it("reports KV usage, running and waiting requests, and preemptions as the cache fills", async () => {
    const chat = (i: number) =>
      postJson(
        `${sim.url}/v1/chat/completions`,
        {
          messages: [{ role: "user", content: `request ${i} asks for words` }],
          max_tokens: 60,
          ignore_eos: true,
        },
        { "x-sample-key": `m${i}` },
      );
    const replies = Promise.all([0, 1, 2].map(chat));
    let peak = 0;
    let running = 0;
    while (sim.stats().replica!.generationTokens < 60) {
      const text = await scrape();
      peak = Math.max(peak, metric(text, "vllm:kv_cache_usage_perc"));
      running = Math.max(running, metric(text, "vllm:num_requests_running"));
      await new Promise((resolve) => setTimeout(resolve, 3));
    }
    expect((await replies).every((reply) => reply.body.usage.completion_tokens === 60)).toBe(true);
    const after = await scrape();
    expect(peak).toBeGreaterThan(0.5);
    expect(peak).toBeLessThanOrEqual(1);
    expect(running).toBeGreaterThanOrEqual(2);
    expect(metric(after, "vllm:num_preemptions_total")).toBeGreaterThan(0);
    expect(metric(after, "vllm:generation_tokens_total")).toBe(180);
    expect(metric(after, "vllm:kv_cache_usage_perc")).toBe(0);
    expect(metric(after, "vllm:num_requests_waiting")).toBe(0);
  });

  it("sends each streamed token when its step ends, a step's time apart", async () => {
    const response = await fetch(`${sim.url}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ prompt: "count", max_tokens: 8, ignore_eos: true, stream: true }),
    });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    const arrivals: number[] = [];
    let text = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      arrivals.push(performance.now());
    }
    // Eight 4 ms steps: the first token's chunk arrives well before the last one's (reads that a
    // busy machine merges only shorten the list, not the span).
    expect(text.match(/"token_ids"|"text"/g)?.length).toBeGreaterThanOrEqual(8);
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThanOrEqual(7 * 4 * 0.75);
  });
});
