/**
 * Integration: rollouts across a weight sync. An external rollout's HTTP gateway refuses calls
 * with 429 while weights sync; a driven rollout waits the sync out with its step clock paused
 * and picks up the new policy version. Each test restores the policy, never leaving it syncing.
 */
import { afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import type { PolicyState } from "../../../../src/runtime/policy/policy-state";
import { createExternal, openaiFor } from "../../../fixtures/external-rollouts";
import {
  api,
  getRollout,
  startRollout,
  uniqueId,
  waitFor,
  waitForEnd,
} from "../../../fixtures/rollouts";
import "../../../fixtures/test-agents";
import { readPolicyState, restorePolicyState, sleep } from "../../fixtures/policy-fixtures";

const post = (path: string, body: unknown) =>
  api(path, { method: "POST", body: JSON.stringify(body) });

let saved: PolicyState;
beforeAll(async () => void (saved = await readPolicyState()));
afterEach(async () => restorePolicyState(saved));

/** Begins a sync, waiting for in-flight calls to drain; returns when no call is in flight. */
async function beginSync(): Promise<void> {
  const begun = await post("/v1/policy/sync/begin", { wait_ms: 5_000 });
  expect(await begun.json()).toEqual({ policy_version: 0, syncing: true, in_flight: 0 });
}

async function endSync(version: number): Promise<void> {
  const ended = await post("/v1/policy/sync/end", { policy_version: version });
  expect(ended.status).toBe(200);
}

describe("an external rollout's gateway during a weight sync", () => {
  it("answers 429 problem+json with Retry-After while syncing, and serves the call under the new version after sync/end", async () => {
    const rollout = await createExternal();
    const client = openaiFor(rollout.llm.base_url, rollout.llm.api_key);
    const ask = () =>
      client.chat.completions.create({
        model: "any",
        messages: [{ role: "user", content: "What is 2 + 2?" }],
        max_tokens: 8,
      });
    await beginSync();
    const refused = await ask().then(
      () => null,
      (error: unknown) =>
        error as { status: number; headers: Headers; error: { type: string; message: string } },
    );
    expect(refused?.status).toBe(429);
    expect(refused?.headers.get("retry-after")).toBe("1");
    expect(refused?.headers.get("content-type")).toBe("application/problem+json");
    expect(refused?.error).toMatchObject({
      type: "policy_syncing",
      message: expect.stringMatching(/retry after 1 s/),
    });
    expect(await getRollout(rollout.rollout_id)).toMatchObject({
      status: "running",
      llm_calls: [],
    });

    await endSync(1);
    const completion = await ask();
    expect(completion.choices[0]?.message.content).toEqual(expect.any(String));
    const view = await getRollout(rollout.rollout_id);
    expect(view.status).toBe("running");
    expect(
      view.llm_calls.map((call) => [call.policy_version_start, call.policy_version_end]),
    ).toEqual([[1, 1]]);
    // Under the new weights the replica must not reuse KV computed by the old ones.
    expect(view.llm_calls[0]?.request.cache_salt).toBe("policy-v1");
  });

  it("renders the refusal as RFC 9457 problem+json for a plain HTTP client", async () => {
    const rollout = await createExternal();
    await beginSync();
    const response = await api(`/v1/rollouts/${rollout.rollout_id}/llm/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${rollout.llm.api_key}` },
      body: JSON.stringify({ model: "any", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("1");
    expect(await response.json()).toMatchObject({
      type: "urn:edge-rollout:problem:policy_syncing",
      title: "PolicySyncingError",
      status: 429,
      instance: `/v1/rollouts/${rollout.rollout_id}/llm/v1/chat/completions`,
    });
  });
});

describe("a driven rollout across a weight sync", () => {
  // Each env step sleeps 300 ms; a step may run 3 s (room for a loaded machine: at 800 ms a step
  // timed out under load before any sync). The sync is held 3.7 s, so a step that waits for it
  // outlasts step_timeout_ms unless its clock pauses while it waits.
  const STEP_TIMEOUT_MS = 3_000;
  const HOLD_MS = STEP_TIMEOUT_MS + 700;

  it("waits the sync out without TIMEOUT or lost steps, sends nothing upstream meanwhile, and records the new version after it", async () => {
    const rolloutId = await startRollout({
      agent: "test-loop",
      rollout_id: uniqueId("sync-driven"),
      task: { problem: "Say hello.", extra_args: { done_after: 4, step_sleep_ms: 300 } },
      config: { step_timeout_ms: STEP_TIMEOUT_MS, max_steps: 6 },
    });
    await waitFor("the first step to be committed", async () =>
      (await getRollout(rolloutId)).trajectory.steps.length >= 1 ? true : undefined,
    );
    const atBegin = (await getRollout(rolloutId)).llm_calls.length;
    await beginSync();
    await sleep(HOLD_MS);
    const during = await getRollout(rolloutId);
    await endSync(1);

    const view = await waitForEnd(rolloutId, 15_000);
    expect(during.status).toBe("running");
    expect(view).toMatchObject({
      status: "succeeded",
      termination_reason: "ENV_DONE",
      error: null,
    });
    const steps = view.trajectory.steps;
    expect(steps.map((step) => step.step_index)).toEqual([0, 1, 2, 3]);
    expect(view.llm_calls.map((call) => call.call_id)).toEqual(
      steps.map((step) => step.llm_call_ids[0]),
    );
    // The step that waited for the sync ran longer than step_timeout_ms and still committed.
    expect(Math.max(...steps.map((step) => step.duration_ms))).toBeGreaterThan(STEP_TIMEOUT_MS);

    // By order and version, not clocks: the calls made before the sync are exactly those the
    // rollout had while it was held (nothing went upstream meanwhile), and every later one ran
    // under the new version, which exists only after sync/end.
    const before = view.llm_calls.slice(0, during.llm_calls.length);
    const after = view.llm_calls.slice(during.llm_calls.length);
    expect(before.map((call) => call.call_id)).toEqual(
      during.llm_calls.map((call) => call.call_id),
    );
    expect(during.llm_calls.length - atBegin).toBeLessThanOrEqual(1); // at most the call in flight at begin
    expect(before.length).toBeGreaterThanOrEqual(1);
    expect(after.length).toBeGreaterThanOrEqual(1);
    for (const call of before)
      expect([call.policy_version_start, call.policy_version_end]).toEqual([0, 0]);
    for (const call of after)
      expect([call.policy_version_start, call.policy_version_end]).toEqual([1, 1]);
    for (const call of before) expect(call.request.cache_salt).toBeUndefined();
    for (const call of after) expect(call.request.cache_salt).toBe("policy-v1");
  });
});

describe("a rollout's replica under sticky_least_loaded", () => {
  it("keeps consecutive calls on the rollout's replica until its calls in flight cross the bound", async () => {
    // Both replicas hold a call at least 1 s (a 1.5 s first token; 40 tokens 25 ms apart).
    const replicas = [`${inject("slowSimulatorUrl")}/v1`, `${inject("pacedSimulatorUrl")}/v1`];
    const put = await api("/v1/policy", {
      method: "PUT",
      body: JSON.stringify({
        backend: { name: "vllm", replicas, routing: { policy: "sticky_least_loaded", bound: 1 } },
      }),
    });
    expect(put.status).toBe(200);
    const rollout = await createExternal();
    const client = openaiFor(rollout.llm.base_url, rollout.llm.api_key);
    const ask = (text: string) =>
      client.chat.completions.create({
        model: "any",
        messages: [{ role: "user", content: text }],
        max_tokens: 40,
      });
    await ask("turn 1");
    const home = (await getRollout(rollout.rollout_id)).llm_calls[0]!.replica;
    // Three calls 250 ms apart: the first two stay home (0, then 1 in flight there: within the bound
    // of 1 over the other replica's 0); the third finds 2 in flight there and goes to the other.
    const overlapping = [];
    for (let i = 2; i <= 4; i++) {
      overlapping.push(ask(`turn ${i}`));
      await sleep(250);
    }
    await Promise.all(overlapping);
    const calls = (await getRollout(rollout.rollout_id)).llm_calls;
    expect(calls.filter((call) => call.replica === home)).toHaveLength(3);
    expect(
      calls.filter((call) => call.replica !== home).map((call) => replicas.includes(call.replica)),
    ).toEqual([true]);
    // Before any sync (version 0) no salt is sent; the tests above check calls after one carry it.
    for (const call of calls) expect(call.request.cache_salt).toBeUndefined();
  });
});
