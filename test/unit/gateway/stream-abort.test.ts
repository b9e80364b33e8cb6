import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createVllmBackend } from "../../../src/gateway/backends";
import { createGateway } from "../../../src/gateway/gateway";
import type { PolicyPort } from "../../../src/gateway/policy-port";
import type { LlmCall } from "../../../src/schemas/llm-call";
import { type VllmSimulator, startVllmSimulator } from "../../../tools/simulator";

const limits = {
  max_prompt_length: 131072,
  max_response_length: 4096,
  max_tokens_per_call: null,
  completion_tokens_used: 0,
  last_context_tokens: 0,
  last_context_messages: 0,
};

/** A policy port that keeps its in-flight calls in a set (what an admission shard counts). */
function countingPolicy(): PolicyPort & { inFlight: Set<string> } {
  const inFlight = new Set<string>();
  return {
    inFlight,
    acquire: async (_rollout, callId) => (
      inFlight.add(callId),
      {
        ok: true,
        policy_version: 0,
        model: null,
        backend: null,
        sampling: { temperature: 1, top_p: 1 },
      }
    ),
    release: async (_rollout, callId) => (inFlight.delete(callId), { policy_version: 0 }),
  };
}

describe("a streamed gateway call whose caller goes away", () => {
  let sim: VllmSimulator;
  beforeAll(
    async () =>
      void (sim = await startVllmSimulator({
        port: 0,
        seed: 3,
        latency: { ttftMs: 0, perTokenMs: 15 },
      })),
  );
  afterAll(() => sim.close());

  it("reads the upstream to its end after the caller hangs up, then releases its admission and records the whole call, untrainable", async () => {
    const policy = countingPolicy();
    const backend = createVllmBackend({ baseUrl: `${sim.url}/v1` });
    const gateway = createGateway({
      policy,
      backendFor: () => backend,
      defaultModel: "sim-qwen3",
      now: Date.now,
    });
    const recorded: LlmCall[] = [];
    const kept: Promise<unknown>[] = [];
    const call = {
      rolloutId: "r-abort",
      stepId: null,
      callId: "r-abort/gw/1",
      train: true,
      limits,
      replicaHint: null,
      whileSyncing: "refuse" as const,
      keepAlive: (work: Promise<unknown>) => void kept.push(work),
    };
    const body = { messages: [{ role: "user", content: "Tell me a long story." }], max_tokens: 40 };
    const before = sim.stats();
    const response = await gateway.stream(
      "/chat/completions",
      body,
      call,
      async (record) => void recorded.push(record),
    );
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    expect(policy.inFlight.has(call.callId)).toBe(true);
    await reader.cancel("client went away");
    expect(policy.inFlight.has(call.callId)).toBe(true);
    await Promise.all(kept);
    expect(policy.inFlight.size).toBe(0);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]).toMatchObject({ call_id: call.callId, trainable: false });
    // Every token the upstream generated is in the record: the read went on without the caller.
    expect(recorded[0]!.completion_token_ids.length).toBe(
      sim.stats().completionTokens - before.completionTokens,
    );
    expect(recorded[0]!.finish_reason).not.toBe("abort");
    expect(recorded[0]!.prompt_token_ids.length).toBeGreaterThan(0);
  });

  it("does not wait for a caller that never reads: the call ends when the upstream does", async () => {
    const policy = countingPolicy();
    const backend = createVllmBackend({ baseUrl: `${sim.url}/v1` });
    const gateway = createGateway({
      policy,
      backendFor: () => backend,
      defaultModel: "sim-qwen3",
      now: Date.now,
    });
    const recorded: LlmCall[] = [];
    const kept: Promise<unknown>[] = [];
    const call = {
      rolloutId: "r-stall",
      stepId: null,
      callId: "r-stall/gw/1",
      train: true,
      limits,
      replicaHint: null,
      whileSyncing: "refuse" as const,
      keepAlive: (work: Promise<unknown>) => void kept.push(work),
    };
    const response = await gateway.stream(
      "/chat/completions",
      { messages: [{ role: "user", content: "Tell me a story." }], max_tokens: 30 },
      call,
      async (record) => void recorded.push(record),
    );
    await Promise.all(kept);
    expect(policy.inFlight.size).toBe(0);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]!.trainable).toBe(true);
    // The caller reading late still gets the whole stream.
    expect((await response.text()).trimEnd().endsWith("data: [DONE]")).toBe(true);
  });

  it("still releases once and records a completed stream as before", async () => {
    const policy = countingPolicy();
    const backend = createVllmBackend({ baseUrl: `${sim.url}/v1` });
    const gateway = createGateway({
      policy,
      backendFor: () => backend,
      defaultModel: "sim-qwen3",
      now: Date.now,
    });
    const recorded: LlmCall[] = [];
    const call = {
      rolloutId: "r-done",
      stepId: null,
      callId: "r-done/gw/1",
      train: true,
      limits,
      replicaHint: null,
      whileSyncing: "refuse" as const,
    };
    const response = await gateway.stream(
      "/chat/completions",
      { messages: [{ role: "user", content: "Hi" }], max_tokens: 8 },
      call,
      async (record) => void recorded.push(record),
    );
    const text = await response.text();
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    expect(policy.inFlight.size).toBe(0);
    expect(recorded).toHaveLength(1);
    expect(recorded[0]!.finish_reason).not.toBe("abort");
    expect(recorded[0]!.trainable).toBe(true);
  });
});
