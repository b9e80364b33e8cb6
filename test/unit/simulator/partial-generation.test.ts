import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type VllmSimulator, startVllmSimulator } from "../../../tools/simulator";
import { postJson } from "./simulator-fixtures";

/** Reads a streamed chat until `count` tokens arrived, then closes the connection. */
async function readThenHangUp(
  url: string,
  body: unknown,
  count: number,
): Promise<{ ids: number[]; logprobs: number[] }> {
  const controller = new AbortController();
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const ids: number[] = [];
  const logprobs: number[] = [];
  let buffer = "";
  while (ids.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(6, cut);
      buffer = buffer.slice(cut + 2);
      if (event === "[DONE]") continue;
      const choice = JSON.parse(event).choices[0];
      if (choice?.token_ids) {
        ids.push(...choice.token_ids);
        logprobs.push(
          ...choice.logprobs.content.map((entry: { logprob: number }) => entry.logprob),
        );
      }
    }
  }
  controller.abort();
  return { ids: ids.slice(0, count), logprobs: logprobs.slice(0, count) };
}

async function until(check: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe("simulator: aborting, resuming from token ids, weights versions", () => {
  let sim: VllmSimulator;
  const chat = {
    messages: [{ role: "user", content: "Tell me something long." }],
    max_tokens: 400,
    logprobs: true,
    return_token_ids: true,
  };
  beforeAll(async () => {
    sim = await startVllmSimulator({
      port: 0,
      seed: 3,
      latency: { ttftMs: 0, perTokenMs: 4 },
      tail: { distribution: "pareto", scaleTokens: 60 },
    });
  });
  afterAll(() => sim.close());

  it("stops generating (and counting) when the client hangs up, and a resumed call continues the same script under the new version", async () => {
    sim.configure({ latency: { perTokenMs: 0 } });
    const whole = await postJson(`${sim.url}/v1/chat/completions`, { ...chat, seed: 11 });
    const full: number[] = whole.body.choices[0].token_ids;
    const fullLogprobs: number[] = whole.body.choices[0].logprobs.content.map(
      (entry: { logprob: number }) => entry.logprob,
    );
    expect(full.length).toBeGreaterThan(40);

    sim.configure({ latency: { perTokenMs: 4 } });
    const before = sim.stats();
    const part = await readThenHangUp(
      `${sim.url}/v1/chat/completions`,
      { ...chat, seed: 11, stream: true },
      20,
    );
    await until(() => sim.stats().completions > before.completions);
    const counted = sim.stats().completionTokens - before.completionTokens;
    expect(counted).toBeGreaterThanOrEqual(20);
    expect(counted).toBeLessThan(full.length);
    expect(part.ids).toEqual(full.slice(0, 20));
    expect(part.logprobs).toEqual(fullLogprobs.slice(0, 20));

    sim.configure({ policyVersion: 1, latency: { perTokenMs: 0 } });
    const rendered = await postJson(`${sim.url}/tokenize`, { messages: chat.messages });
    const resumed = await postJson(`${sim.url}/v1/completions`, {
      prompt: [...rendered.body.tokens, ...part.ids],
      max_tokens: 400 - 20,
      logprobs: 0,
      return_token_ids: true,
    });
    const rest: number[] = resumed.body.choices[0].token_ids;
    expect([...part.ids, ...rest]).toEqual(full);
    const restLogprobs: number[] = resumed.body.choices[0].logprobs.token_logprobs;
    expect(restLogprobs).toHaveLength(rest.length);
    // Same tokens, other weights: every logprob of the second half differs from version 0's.
    restLogprobs.forEach((logprob, i) => expect(logprob).not.toBe(fullLogprobs[20 + i]));
    sim.configure({ policyVersion: 0 });
  });

  it("counts only the positions a non-streamed call generated before its client left", async () => {
    sim.configure({ latency: { perTokenMs: 5 } });
    const before = sim.stats();
    const controller = new AbortController();
    const call = fetch(`${sim.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...chat, seed: 11 }),
      signal: controller.signal,
    }).catch(() => undefined);
    await new Promise((resolve) => setTimeout(resolve, 60));
    controller.abort();
    await call;
    await until(() => sim.stats().completions > before.completions);
    const counted = sim.stats().completionTokens - before.completionTokens;
    expect(counted).toBeGreaterThan(0);
    expect(counted).toBeLessThan(40);
  });
});

describe("simulator: response-length tail and per-prompt difficulty", () => {
  let sim: VllmSimulator;
  afterAll(() => sim?.close());

  it("draws pareto-tailed lengths: a few answers are many times the median", async () => {
    sim = await startVllmSimulator({
      port: 0,
      seed: 5,
      tail: { distribution: "pareto", shape: 1.5, scaleTokens: 20 },
    });
    const lengths: number[] = [];
    for (let i = 0; i < 10; i++) {
      const { body } = await postJson(`${sim.url}/v1/chat/completions`, {
        messages: [{ role: "user", content: "Hi" }],
        n: 20,
        return_token_ids: true,
      });
      for (const choice of body.choices) lengths.push(choice.token_ids.length);
    }
    lengths.sort((a, b) => a - b);
    const median = lengths[100]!;
    expect(median).toBeGreaterThan(20);
    expect(lengths.at(-1)!).toBeGreaterThan(5 * median);
    await sim.close();
  });

  it("gives each prompt its own success rate, so some groups are uniform and some are mixed", async () => {
    sim = await startVllmSimulator({ port: 0, seed: 5, successRate: 0.5, difficulty: 0.8 });
    let uniform = 0;
    let mixed = 0;
    for (let prompt = 0; prompt < 24; prompt++) {
      const a = 10 + prompt;
      const { body } = await postJson(`${sim.url}/v1/chat/completions`, {
        messages: [{ role: "user", content: `What is ${a} + 7?` }],
        n: 8,
      });
      const correct = body.choices.filter((choice: { message: { content: string } }) =>
        choice.message.content.includes(`\\boxed{${a + 7}}`),
      ).length;
      if (correct === 0 || correct === 8) uniform++;
      else mixed++;
    }
    expect(uniform).toBeGreaterThan(3);
    expect(mixed).toBeGreaterThan(3);
    await sim.close();
  });
});
