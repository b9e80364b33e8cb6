import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type VllmSimulator, startVllmSimulator } from "../../../tools/simulator";
import { postJson, postSse } from "./simulator-fixtures";

const CHAT = { messages: [{ role: "user", content: "What is 1 + 1?" }] };

describe("vLLM simulator fault injection", () => {
  let sim: VllmSimulator;
  let url: string;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0 });
    url = `${sim.url}/v1/chat/completions`;
  });
  afterAll(() => sim.close());

  it("answers 500 with an error body at rate5xx=1", async () => {
    sim.configure({ faults: { rate5xx: 1 } });
    const reply = await postJson(url, CHAT);
    sim.configure({ faults: { rate5xx: 0 } });
    expect(reply).toMatchObject({
      status: 500,
      body: { error: { type: "InternalServerError", code: 500 } },
    });
  });

  it("answers 429 with an error body at rate429=1", async () => {
    sim.configure({ faults: { rate429: 1 } });
    const reply = await postJson(`${sim.url}/v1/completions`, { prompt: "hi" });
    sim.configure({ faults: { rate429: 0 } });
    expect(reply).toMatchObject({ status: 429, body: { error: { code: 429 } } });
  });

  it("sends invalid JSON with status 200, and a broken data line when streaming", async () => {
    sim.configure({ faults: { rateMalformed: 1 } });
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(CHAT),
    });
    const text = await response.text();
    const events = await postSse(url, { ...CHAT, stream: true });
    sim.configure({ faults: { rateMalformed: 0 } });
    expect(response.status).toBe(200);
    expect(text.startsWith('{"id":"chatcmpl-')).toBe(true);
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
    expect(events).not.toContain("[DONE]");
    expect(() => events.map((event) => JSON.parse(event))).toThrow(SyntaxError);
  });

  it("holds a request for hangMs and then drops the connection", async () => {
    sim.configure({ faults: { rateTimeout: 1, hangMs: 50 } });
    const started = Date.now();
    await expect(
      fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(CHAT),
      }),
    ).rejects.toThrow();
    sim.configure({ faults: { rateTimeout: 0 } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });

  it("injects faults at roughly the configured rate and counts them in /sim/stats", async () => {
    const before = sim.stats().faults["5xx"];
    const put = await fetch(`${sim.url}/sim/config`, {
      method: "PUT",
      body: JSON.stringify({ faults: { rate5xx: 0.5 } }),
    });
    expect(put.status).toBe(200);
    const statuses = await Promise.all(
      Array.from({ length: 200 }, async () => (await postJson(url, CHAT)).status),
    );
    sim.configure({ faults: { rate5xx: 0 } });
    const failed = statuses.filter((status) => status === 500).length;
    expect(failed).toBeGreaterThan(70);
    expect(failed).toBeLessThan(130);
    const stats = (await (await fetch(`${sim.url}/sim/stats`)).json()) as {
      faults: Record<string, number>;
    };
    expect(stats.faults["5xx"]! - before).toBe(failed);
  });

  it("rejects an invalid config patch naming the field", async () => {
    const put = await fetch(`${sim.url}/sim/config`, {
      method: "PUT",
      body: JSON.stringify({ faults: { rate5xx: 2 } }),
    });
    expect(put.status).toBe(400);
    expect(((await put.json()) as { error: { message: string } }).error.message).toContain(
      "faults.rate5xx",
    );
    expect(() => sim.configure({ port: 1 } as never)).toThrow(RangeError);
  });
});
