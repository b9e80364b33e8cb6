import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type VllmSimulator, startVllmSimulator } from "../../../tools/simulator";
import { postJson } from "./simulator-fixtures";

const CHAT = { messages: [{ role: "user", content: "What is 3 + 4?" }], seed: 1 };

describe("simulated latency", () => {
  let sim: VllmSimulator;
  let url: string;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, latency: { ttftMs: 60, perTokenMs: 2 } });
    url = `${sim.url}/v1/chat/completions`;
  });
  afterAll(() => sim.close());

  it("delays a non-stream answer by ttft plus per-token time", async () => {
    const started = Date.now();
    const { body } = await postJson(url, CHAT);
    expect(Date.now() - started).toBeGreaterThanOrEqual(55 + 2 * body.usage.completion_tokens);
  });

  it("sends the first stream chunk after ttft and paces the rest", async () => {
    const started = Date.now();
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...CHAT, stream: true }),
    });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    const firstChunkAt = Date.now() - started;
    while (!(await reader.read()).done) {
      // Drain the stream.
    }
    expect(firstChunkAt).toBeGreaterThanOrEqual(55);
    expect(Date.now() - started).toBeGreaterThan(firstChunkAt + 10);
  });

  it("serves concurrent requests in parallel rather than in turn", async () => {
    // Order, not milliseconds: a slow request taken in first is overtaken by a fast one sent while
    // it is still pending, which a server answering in turn could not do.
    const before = sim.stats().requests;
    sim.configure({ latency: { ttftMs: 3000 } });
    const finished: string[] = [];
    const slow = postJson(url, CHAT).then(() => finished.push("slow"));
    while (sim.stats().requests === before) await new Promise((r) => setTimeout(r, 5));
    sim.configure({ latency: { ttftMs: 0 } });
    const fast = postJson(url, CHAT).then(() => finished.push("fast"));
    await Promise.all([slow, fast]);
    sim.configure({ latency: { ttftMs: 60 } });
    expect(finished).toEqual(["fast", "slow"]);
  });
});
