/**
 * The engine's step loop in-process: batching, the KV cache filling and preempting, recompute, and
 * outputs that do not depend on how the steps were scheduled.
 */
import { describe, expect, it } from "vitest";
import { EngineLoop, type EngineRequestSpec } from "../../../../tools/simulator/engine/engine-loop";
import type { SamplingParams } from "../../../../tools/simulator/engine/sequence";
import { createScriptedSource } from "../../../../tools/simulator/engine/token-source";
import { type VllmSimulatorOptions, resolveOptions } from "../../../../tools/simulator/options";
import { tokenizerFor } from "../../../../tools/simulator/tokenizer-registry";

const tokenizer = tokenizerFor("toy");
const params = (maxTokens: number): SamplingParams => ({
  maxTokens,
  minTokens: 0,
  ignoreEos: false,
  stop: [],
  stopTokenIds: [],
  includeStopStr: false,
  topLogprobs: 0,
  temperature: 1,
  topP: 1,
  topK: -1,
  seed: null,
});
/** Sequence `i`: a 40-token prompt of its own, then a 60-token scripted body. */
const spec = (i: number): EngineRequestSpec => ({
  promptIds: Array.from({ length: 40 }, (_, k) => 10 + ((i * 41 + k) % 200)),
  salt: null,
  params: params(100),
  contextLeft: 10_000,
  key: null,
  script: {
    bodyIds: Array.from({ length: 60 }, (_, k) => 20 + ((i + k) % 150)),
    logprobSeed: i,
    positionOffset: 0,
  },
  tokenizer,
});
const engineWith = (options: VllmSimulatorOptions) => {
  const config = resolveOptions({ tokenizer: "toy", ...options });
  return new EngineLoop(() => config, createScriptedSource);
};
async function runAll(engine: EngineLoop, count: number) {
  const requests = Array.from({ length: count }, (_, i) => engine.add(spec(i)));
  await Promise.all(requests.map((r) => r.done));
  return requests;
}

describe("EngineLoop", () => {
  it("decodes every running sequence in one step, one token each", async () => {
    const engine = engineWith({});
    const requests = await runAll(engine, 8);
    const counters = engine.counters();
    // 60 body tokens + EOS per sequence, all eight in the same 61 steps.
    expect(requests.every((r) => r.output.ids.length === 61)).toBe(true);
    expect(counters.steps).toBe(61);
    expect(counters.generationTokens).toBe(8 * 61);
    expect(counters.preemptions).toBe(0);
  });

  it("preempts the newest sequence when the cache cannot grow, recomputes it, and ends with the same tokens", async () => {
    const roomy = await runAll(engineWith({}), 6);
    // 6 sequences of 100 tokens need 6 x 7 blocks of 16: 24 blocks cannot hold them at once.
    const tight = engineWith({ prefixCache: { capacityBlocks: 24 } });
    const pressed = await runAll(tight, 6);
    const counters = tight.counters();
    expect(counters.preemptions).toBeGreaterThan(0);
    expect(pressed.map((r) => r.output.ids)).toEqual(roomy.map((r) => r.output.ids));
    expect(pressed.map((r) => r.output.logprobs)).toEqual(roomy.map((r) => r.output.logprobs));
    // Recompute prefills the preempted sequences' context again.
    expect(counters.promptTokens).toBeGreaterThan(6 * 40);
    expect(counters.kvUsedBlocks).toBe(0);
    expect(pressed.some((r) => r.preemptions > 0)).toBe(true);
  });

  it("admits at most maxNumSeqs at once and chunks prefills to the token budget", async () => {
    const engine = engineWith({ engine: { maxNumSeqs: 2, maxNumBatchedTokens: 16 } });
    const requests = Array.from({ length: 4 }, (_, i) => engine.add(spec(i)));
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    const early = engine.counters();
    expect(early.running).toBeLessThanOrEqual(2);
    expect(early.waiting).toBeGreaterThanOrEqual(2);
    await Promise.all(requests.map((r) => r.done));
    // A 40-token prompt in chunks of at most 16: three steps before its first token.
    expect(requests.every((r) => r.output.ids.length === 61)).toBe(true);
    expect(requests[0]!.timings().queueMs).toBe(0);
  });

  it("fails a prompt that can never fit the cache instead of queueing it forever", async () => {
    const engine = engineWith({ prefixCache: { capacityBlocks: 2 } });
    const request = engine.add(spec(0));
    await request.done;
    expect(request.error?.message).toMatch(/more KV blocks than the replica holds/);
    expect(request.output.finishReason).toBe("abort");
  });

  it("frees an aborted sequence's blocks and stops generating it", async () => {
    const engine = engineWith({ latency: { ttftMs: 0, perTokenMs: 5 } });
    const request = engine.add(spec(0));
    while (request.output.ids.length < 3) await new Promise((resolve) => setTimeout(resolve, 2));
    request.abort();
    await request.done;
    const generated = request.output.ids.length;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(request.output.ids.length).toBe(generated);
    expect(request.output.finishReason).toBe("abort");
    expect(engine.counters()).toMatchObject({ running: 0, kvUsedBlocks: 0 });
  });
});
