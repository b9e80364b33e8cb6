import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createVllmBackend } from "../../../src/gateway/backends";
import { createGateway } from "../../../src/gateway/gateway";
import type { PolicyPort } from "../../../src/gateway/policy-port";
import { type VllmSimulator, startVllmSimulator } from "../../../tools/simulator";

const limits = {
  max_prompt_length: 131072,
  max_response_length: 4096,
  max_tokens_per_call: null,
  completion_tokens_used: 0,
  last_context_tokens: 0,
  last_context_messages: 0,
};

/** A policy port admitting under version 4 whose release is held until the test lets it go, reporting `endVersion`. */
function heldPolicy(endVersion: number) {
  const inFlight = new Set<string>();
  let letGo: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (letGo = resolve));
  const port: PolicyPort = {
    acquire: async (_rollout, callId) => (
      inFlight.add(callId),
      {
        ok: true,
        policy_version: 4,
        model: null,
        backend: null,
        sampling: { temperature: 1, top_p: 1 },
      }
    ),
    release: async (_rollout, callId) => {
      await held;
      inFlight.delete(callId);
      return { policy_version: endVersion };
    },
  };
  return { port, inFlight, letGo };
}

const call = (id: string) => ({
  rolloutId: "r-unreleased",
  stepId: null,
  callId: `r-unreleased/gw/${id}`,
  train: true,
  limits,
  replicaHint: null,
  whileSyncing: "refuse" as const,
});
const body = { messages: [{ role: "user", content: "Hi" }], max_tokens: 8 };

describe("a gateway call answered before its admission is released", () => {
  let sim: VllmSimulator;
  beforeAll(async () => void (sim = await startVllmSimulator({ port: 0, seed: 3 })));
  afterAll(() => sim.close());

  it("answers with the record under the admitted version while the release is still under way, then reports the version at release", async () => {
    const policy = heldPolicy(5);
    const backend = createVllmBackend({ baseUrl: `${sim.url}/v1` });
    const gateway = createGateway({
      policy: policy.port,
      backendFor: () => backend,
      defaultModel: "sim-qwen3",
      now: Date.now,
    });
    const answered = await gateway.sendUnreleased("/chat/completions", body, call("1"));
    // The release has not landed (it is held), yet the reply and its record are here.
    expect(policy.inFlight.has("r-unreleased/gw/1")).toBe(true);
    expect(answered.call).toMatchObject({
      call_id: "r-unreleased/gw/1",
      policy_version_start: 4,
      policy_version_end: 4,
      trainable: true,
    });
    expect(answered.call.completion_token_ids.length).toBeGreaterThan(0);
    policy.letGo();
    expect(await answered.released).toBe(5);
    expect(policy.inFlight.size).toBe(0);
  });

  it("releases a call that fails before answering, and send still waits for the release", async () => {
    const failing = heldPolicy(4);
    failing.letGo();
    const broken = createVllmBackend({ baseUrl: "http://127.0.0.1:9/v1" }); // nothing listens on the discard port
    const gateway = createGateway({
      policy: failing.port,
      backendFor: () => broken,
      defaultModel: "sim-qwen3",
      now: Date.now,
      retry: { maxAttempts: 1, baseDelayMs: 0, maxDelayMs: 0 },
    });
    await expect(gateway.sendUnreleased("/chat/completions", body, call("2"))).rejects.toThrow();
    expect(failing.inFlight.size).toBe(0);

    const later = heldPolicy(6);
    const backend = createVllmBackend({ baseUrl: `${sim.url}/v1` });
    const waiting = createGateway({
      policy: later.port,
      backendFor: () => backend,
      defaultModel: "sim-qwen3",
      now: Date.now,
    }).send("/chat/completions", body, call("3"));
    const early = await Promise.race([
      waiting.then(() => "answered"),
      new Promise((resolve) => setTimeout(resolve, 200, "held")),
    ]);
    expect(early).toBe("held"); // send answers only once released
    later.letGo();
    expect((await waiting).call.policy_version_end).toBe(6);
  });

  it("records a streamed call while its release is held, and forwards [DONE] only once the release landed", async () => {
    const policy = heldPolicy(7);
    const backend = createVllmBackend({ baseUrl: `${sim.url}/v1` });
    const gateway = createGateway({
      policy: policy.port,
      backendFor: () => backend,
      defaultModel: "sim-qwen3",
      now: Date.now,
    });
    const seen: Array<{ versionEnd: number; inFlight: boolean; released: Promise<number> }> = [];
    const response = await gateway.stream(
      "/chat/completions",
      body,
      call("4"),
      async (record, released) => {
        seen.push({
          versionEnd: record.policy_version_end,
          inFlight: policy.inFlight.has("r-unreleased/gw/4"),
          released,
        });
      },
    );
    const text = response.text();
    // Until the record arrives (polled, not a fixed 200 ms a loaded machine may need more than).
    while (seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    // The record came while the release was still held, and the stream waits for the release.
    expect(seen.map(({ versionEnd, inFlight }) => ({ versionEnd, inFlight }))).toEqual([
      { versionEnd: 4, inFlight: true },
    ]);
    expect(await Promise.race([text.then(() => "ended"), Promise.resolve("open")])).toBe("open");
    policy.letGo();
    expect(await text).toContain("data: [DONE]");
    expect(await seen[0]!.released).toBe(7);
    expect(policy.inFlight.size).toBe(0);
  });
});
