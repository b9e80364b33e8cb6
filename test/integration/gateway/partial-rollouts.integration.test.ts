/**
 * Integration: partial rollouts. 50 plain calls (half streamed, half not) through rollouts'
 * gateway endpoints are cut mid-generation by a real `sync/begin {mode: "interrupt"}`, then resumed
 * from token ids after `sync/end`. The paced simulator generates greedily (temperature 0), so what
 * the uninterrupted call would have produced is known: each whole call must equal it (no gap, no
 * duplicate), tokens before the cut carry version 0's logprobs and the rest version 1's (the
 * simulator's weights version changes with the sync), and admissions end at 0. A call with tools
 * is drained instead, and says so in its record. The calls go straight to each rollout's session
 * object (`gatewayCall`, what the HTTP route forwards to): one test invocation may hold only 6
 * connections open at once, so 50 concurrent HTTP calls from it would run 6 at a time.
 */
import { objects } from "../../../src/runtime/objects/object-directory";
import { env } from "cloudflare:workers";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CALCULATE, createExternal } from "../../fixtures/external-rollouts";
import { api, getRollout, startRollout, waitForEnd } from "../../fixtures/rollouts";
import {
  configureSim,
  inFlight,
  post,
  reference,
  setSimVersion,
  sim,
  unpaced,
} from "./partial-rollout-fixtures";
import { readPolicyState, restorePolicyState } from "../fixtures/policy-fixtures";
import type { PolicyState } from "../../../src/runtime/policy/policy-state";
import type { JsonObject } from "../../../src/schemas/json";

let saved: PolicyState;
beforeAll(async () => void (saved = await readPolicyState()));
afterEach(async () => restorePolicyState(saved));
beforeEach(async () => {
  const put = await api("/v1/policy", {
    method: "PUT",
    body: JSON.stringify({
      backend: { name: "vllm", replicas: [`${sim()}/v1`] },
      sampling: { temperature: 0 },
    }),
  });
  expect(put.status).toBe(200);
});
afterAll(async () => void (await setSimVersion(0)));

describe("an interrupting weight sync", () => {
  it("cuts 50 plain calls mid-generation and resumes each token-exactly under the new version; a call with tools is drained", async () => {
    const { policy_version: v0 } = (await (await api("/v1/policy")).json()) as {
      policy_version: number;
    };
    const calls = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => ({
        i,
        rollout: await createExternal(),
        content: `Tell me story number ${i}.`,
        stream: i % 2 === 0,
      })),
    );
    const tools = await createExternal();
    const before = await unpaced(() => Promise.all(calls.map(({ content }) => reference(content))));
    const decoder = new TextDecoder();
    const gatewayCall = (rolloutId: string, body: JsonObject) =>
      objects(env)
        .session(rolloutId)
        .gatewayCall("/chat/completions", body, {
          rolloutId,
          callId: `${rolloutId}/gw/${crypto.randomUUID()}`,
          attempt: null,
          purpose: "policy",
        });
    const answers = calls.map(async ({ rollout, content, stream }) => {
      const result = await gatewayCall(rollout.rollout_id, {
        model: "any",
        messages: [{ role: "user", content }],
        max_tokens: 400,
        ...(stream ? { stream: true } : {}),
      });
      if (!result.ok) throw new Error(result.error.message);
      if ("json" in result)
        return (JSON.parse(result.json) as { choices: Array<{ token_ids: number[] }> }).choices[0]!
          .token_ids;
      // The caller's stream: one continuous chat completion across the sync, ending with [DONE].
      let text = "";
      const reader = result.stream.getReader();
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read())
        text += decoder.decode(chunk.value, { stream: true });
      const events = text
        .split("\n\n")
        .filter((event) => event.startsWith("data: "))
        .map((event) => event.slice(6));
      expect(events.at(-1)).toBe("[DONE]");
      return events
        .slice(0, -1)
        .flatMap(
          (event) =>
            (JSON.parse(event) as { choices: Array<{ token_ids?: number[] | null }> }).choices[0]
              ?.token_ids ?? [],
        );
    });
    const toolCall = gatewayCall(tools.rollout_id, {
      model: "any",
      messages: [{ role: "user", content: "What is 6 * 7? Tell me a long story first." }],
      tools: [CALCULATE],
      max_tokens: 400,
    });
    for (let tries = 0; (await inFlight()) < 51; tries++) {
      if (tries > 400) throw new Error(`only ${await inFlight()} calls were admitted`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await new Promise((resolve) => setTimeout(resolve, 150)); // every call is generating now

    const began = Date.now();
    const begun = await post("/v1/policy/sync/begin", { mode: "interrupt", wait_ms: 1_000 });
    expect(begun.status).toBe(200);
    const beginMs = Date.now() - began;
    const { in_flight: left } = (await begun.json()) as { in_flight: number };
    // Only the drained call (tools) is still generating under the old version.
    expect(left).toBeLessThanOrEqual(1);
    // The target is < 1 s: 0.56 s measured here at a load average of 11, once calls still
    // opening their stream were cut as they open (3-11 s before, waiting out their generations).
    // The bound leaves room for a CI machine whose other test worker relays streams meanwhile.
    expect(beginMs).toBeLessThan(8_000);
    expect((await post("/v1/policy/sync/begin", { mode: "interrupt" })).status).toBe(200); // again: harmless
    await setSimVersion(v0 + 1);
    expect((await post("/v1/policy/sync/end", { policy_version: v0 + 1 })).status).toBe(200);

    const received = await Promise.all(answers);
    await toolCall;
    expect(await inFlight()).toBe(0);
    const afterSync = await unpaced(() =>
      Promise.all(calls.map(({ content }) => reference(content))),
    );
    for (const [index, { rollout }] of calls.entries()) {
      const expected = before[index]!;
      const after = afterSync[index]!;
      const [call] = (await getRollout(rollout.rollout_id)).llm_calls;
      expect(call!.completion_token_ids).toEqual(expected.ids);
      expect(received[index]).toEqual(expected.ids);
      expect(call!.interruption).toEqual({ interruptible: true, reason: null, interrupted: 1 });
      const runs = call!.policy_version_runs!;
      expect(runs).toHaveLength(2);
      expect(runs[0]).toEqual({ from_token: 0, policy_version: v0 });
      const cut = runs[1]!.from_token;
      expect(runs[1]!.policy_version).toBe(v0 + 1);
      expect(cut).toBeGreaterThan(0);
      expect(cut).toBeLessThan(expected.ids.length);
      expect(call!.logprobs.slice(0, cut)).toEqual(expected.logprobs.slice(0, cut));
      // The tokens after the cut carry the new weights' logprobs, which differ from the old ones'.
      expect(call!.logprobs.slice(cut)).toEqual(after.logprobs.slice(cut));
      call!.logprobs
        .slice(cut)
        .forEach((logprob, i) => expect(logprob).not.toBe(expected.logprobs[cut + i]));
      expect(call!.usage.completion_tokens).toBe(expected.ids.length);
      expect(call!.trainable).toBe(true);
      expect(call!.policy_version_start).toBe(v0);
      expect(call!.policy_version_end).toBe(v0 + 1);
    }
    const [drained] = (await getRollout(tools.rollout_id)).llm_calls;
    expect(drained!.interruption).toEqual({
      interruptible: false,
      reason: "tools",
      interrupted: 0,
    });
    expect(drained!.policy_version_runs).toBeUndefined();
  }, 60_000);

  it("cuts a call admitted before the sync whose stream had not opened yet, the moment it opens, instead of waiting for its whole generation", async () => {
    const { policy_version: v0 } = (await (await api("/v1/policy")).json()) as {
      policy_version: number;
    };
    const rollout = await createExternal();
    const content = "Tell me a story that takes a while to start.";
    // 1.5 s to the first chunk, then 200 tokens at 25 ms: 6.5 s under the old weights if nothing cut it.
    await configureSim({ latency: { ttftMs: 1_500, perTokenMs: 25 } });
    const call = objects(env)
      .session(rollout.rollout_id)
      .gatewayCall(
        "/chat/completions",
        { model: "any", messages: [{ role: "user", content }], max_tokens: 200, stream: true },
        {
          rolloutId: rollout.rollout_id,
          callId: `${rollout.rollout_id}/gw/${crypto.randomUUID()}`,
          attempt: null,
          purpose: "policy",
        },
      );
    let begun: Response;
    let beginMs: number;
    try {
      for (let tries = 0; (await inFlight()) < 1; tries++) {
        if (tries > 200) throw new Error("the call was never admitted");
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      const began = Date.now();
      begun = await post("/v1/policy/sync/begin", { mode: "interrupt", wait_ms: 4_000 });
      beginMs = Date.now() - began;
    } finally {
      await configureSim({ latency: { ttftMs: 0, perTokenMs: 0 } }); // the restart after the sync runs unpaced
    }
    expect(begun.status).toBe(200);
    // Released as its stream opened (~1.5 s), not when its generation ended (the 4 s wait would run out).
    expect(((await begun.json()) as { in_flight: number }).in_flight).toBe(0);
    expect(beginMs).toBeLessThan(4_000);
    await setSimVersion(v0 + 1);
    expect((await post("/v1/policy/sync/end", { policy_version: v0 + 1 })).status).toBe(200);
    const result = await call;
    if (!result.ok) throw new Error(result.error.message);
    if (!("stream" in result)) throw new Error("a streamed call answered with JSON");
    await new Response(result.stream).text();
    const expected = await reference(content);
    await configureSim({ latency: { ttftMs: 0, perTokenMs: 25 } });
    const [recorded] = (await getRollout(rollout.rollout_id)).llm_calls;
    // Nothing was generated before the cut: the call started again, wholly under the new weights.
    expect(recorded!.interruption).toEqual({ interruptible: true, reason: null, interrupted: 1 });
    expect(recorded!.policy_version_runs).toEqual([{ from_token: 0, policy_version: v0 + 1 }]);
    expect(recorded!.completion_token_ids).toEqual(expected.ids.slice(0, 200));
    expect(recorded!.logprobs).toEqual(expected.logprobs.slice(0, 200));
    expect(await inFlight()).toBe(0);
  }, 30_000);

  it("resumes a call cut inside its think block with the rest of its reasoning as reasoning, as the chat endpoint would have split the whole", async () => {
    const { policy_version: v0 } = (await (await api("/v1/policy")).json()) as {
      policy_version: number;
    };
    const rollout = await createExternal();
    const content = "Think it over, then tell me a story.";
    await configureSim({ thinking: true, reasoningParser: true, latency: { perTokenMs: 0 } });
    type Message = { content: string | null; reasoning?: string | null };
    let expected: { message: Message; ids: number[] };
    try {
      const reply = await fetch(`${sim()}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "sim-qwen3",
          messages: [{ role: "user", content }],
          temperature: 0,
          max_tokens: 300,
          return_token_ids: true,
        }),
      });
      const body = (await reply.json()) as {
        choices: Array<{ message: Message; token_ids: number[] }>;
      };
      expected = { message: body.choices[0]!.message, ids: body.choices[0]!.token_ids };
      expect(expected.message.reasoning).toBeTruthy();
      // 100 ms a token: the sync below lands well inside the think block.
      await configureSim({ latency: { perTokenMs: 100 } });
      const result = await objects(env)
        .session(rollout.rollout_id)
        .gatewayCall(
          "/chat/completions",
          { model: "any", messages: [{ role: "user", content }], max_tokens: 300, stream: true },
          {
            rolloutId: rollout.rollout_id,
            callId: `${rollout.rollout_id}/gw/${crypto.randomUUID()}`,
            attempt: null,
            purpose: "policy",
          },
        );
      if (!result.ok || !("stream" in result)) throw new Error("expected a stream");
      const reader = result.stream.getReader();
      const decoder = new TextDecoder();
      let text = "";
      let synced = false;
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
        text += decoder.decode(chunk.value, { stream: true });
        if (!synced && text.includes('"reasoning"')) {
          synced = true;
          expect(
            (await post("/v1/policy/sync/begin", { mode: "interrupt", wait_ms: 2_000 })).status,
          ).toBe(200);
          await configureSim({ latency: { perTokenMs: 0 } });
          await setSimVersion(v0 + 1);
          expect((await post("/v1/policy/sync/end", { policy_version: v0 + 1 })).status).toBe(200);
        }
      }
      const deltas = text
        .split("\n\n")
        .filter((event) => event.startsWith("data: {"))
        .map(
          (event) =>
            (
              JSON.parse(event.slice(6)) as {
                choices: Array<{ delta: { content?: string; reasoning?: string } }>;
              }
            ).choices[0]?.delta ?? {},
        );
      expect(deltas.map((delta) => delta.reasoning ?? "").join("")).toBe(
        expected.message.reasoning,
      );
      expect(deltas.map((delta) => delta.content ?? "").join("")).toBe(expected.message.content);
    } finally {
      await configureSim({ thinking: false, reasoningParser: false, latency: { perTokenMs: 25 } });
    }
    const [recorded] = (await getRollout(rollout.rollout_id)).llm_calls;
    const runs = recorded!.policy_version_runs!;
    expect(runs).toHaveLength(2);
    // Cut inside the think block: before the tokens of its closing tag.
    const tagged = (await (
      await fetch(`${sim()}/tokenize`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ prompt: "</think>" }),
      })
    ).json()) as { tokens: number[] };
    expect(tagged.tokens).toHaveLength(1);
    expect(runs[1]!.from_token).toBeLessThan(expected.ids.indexOf(tagged.tokens[0]!));
    expect(recorded!.completion_token_ids).toEqual(expected.ids);
    expect(recorded!.response_message).toMatchObject({
      content: expected.message.content,
      reasoning_content: expected.message.reasoning,
    });
  }, 30_000);

  it("cuts a stepwise agent's in-process call (its driver's invocation registers the interrupt with the session) and resumes it token-exactly", async () => {
    const { policy_version: v0 } = (await (await api("/v1/policy")).json()) as {
      policy_version: number;
    };
    const rolloutId = await startRollout({
      agent: "math",
      task: { problem: "Tell me a long story about number 7.", ground_truth: "7" },
      config: { max_steps: 1 },
    });
    for (let tries = 0; (await inFlight()) < 1; tries++) {
      if (tries > 500) throw new Error("the driver's call was never admitted");
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await new Promise((resolve) => setTimeout(resolve, 300)); // generating now
    const began = Date.now();
    const begun = await post("/v1/policy/sync/begin", { mode: "interrupt", wait_ms: 5_000 });
    const beginMs = Date.now() - began;
    expect(begun.status).toBe(200);
    // Cut, not drained: the sync does not wait for the rest of the generation.
    expect(((await begun.json()) as { in_flight: number }).in_flight).toBe(0);
    expect(beginMs).toBeLessThan(5_000);
    await setSimVersion(v0 + 1);
    await configureSim({ latency: { perTokenMs: 0 } }); // the rest of the generation, unpaced
    let view;
    try {
      expect((await post("/v1/policy/sync/end", { policy_version: v0 + 1 })).status).toBe(200);
      view = await waitForEnd(rolloutId, 30_000);
    } finally {
      await configureSim({ latency: { perTokenMs: 25 } });
    }
    const [call] = view.llm_calls;
    expect(call!.interruption).toEqual({ interruptible: true, reason: null, interrupted: 1 });
    expect(call!.policy_version_runs).toHaveLength(2);
    expect(call!.policy_version_runs![1]!.policy_version).toBe(v0 + 1);
    // The whole equals what the same request generates uninterrupted (greedy).
    const {
      stream: _stream,
      stream_options: _options,
      ...request
    } = call!.request as Record<string, unknown>;
    const whole = await unpaced(
      async () =>
        (await (
          await fetch(`${sim()}/v1/chat/completions`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ ...request, return_token_ids: true }),
          })
        ).json()) as { choices: Array<{ token_ids: number[] }> },
    );
    expect(call!.completion_token_ids).toEqual(whole.choices[0]!.token_ids);
    expect(await inFlight()).toBe(0);
  }, 40_000);

  it("refuses an interrupt sync while a drain sync is under way (409 naming the mode) and a version that is not newer", async () => {
    const { policy_version: v0 } = (await (await api("/v1/policy")).json()) as {
      policy_version: number;
    };
    expect((await post("/v1/policy/sync/begin", {})).status).toBe(200);
    const refused = await post("/v1/policy/sync/begin", { mode: "interrupt" });
    expect(refused.status).toBe(409);
    expect(JSON.stringify(await refused.json())).toContain('"mode"');
    expect((await post("/v1/policy/sync/end", { policy_version: v0 })).status).toBe(409);
    expect((await post("/v1/policy/sync/end", { policy_version: v0 + 1 })).status).toBe(200);
  });
});

// Stop strings across the cut: the same set-up (and the same paced simulator, reconfigured one test at a time).
describe("an interrupting weight sync, calls with stop strings", async () =>
  void (await import("./partial-rollouts-stop.cases")));
