/** Integration: rollouts that fail or are cancelled — TIMEOUT, ENV_ERROR, AGENT_ERROR, MODEL_ERROR, CANCELLED. */
import { describe, expect, it } from "vitest";
import {
  api,
  getRollout,
  runRollout,
  startRollout,
  uniqueId,
  waitFor,
  waitForEnd,
} from "../../../fixtures/rollouts";
import { envCalls } from "../../../fixtures/test-agents";

const hello = { problem: "Say hello.", extra_args: { done_after: 3 } };

describe("rollouts that fail", () => {
  it("ends TIMEOUT when a step outlasts step_timeout_ms", async () => {
    const rolloutId = uniqueId("step-timeout");
    const view = await runRollout({
      agent: "test-loop",
      rollout_id: rolloutId,
      task: { problem: "Say hello.", extra_args: { step_sleep_ms: 6_000 } },
      config: { step_timeout_ms: 1_500 },
    });
    expect(view).toMatchObject({ status: "failed", termination_reason: "TIMEOUT" });
    // The budget leaves room for a cold model call on a loaded machine; only the env's sleep outlasts it.
    expect(view.error).toMatch(/^step 0 exceeded/);
    expect(view.trajectory.steps).toHaveLength(0);
    expect(envCalls(rolloutId).step).toBe(1);
  });

  it("ends TIMEOUT when the whole rollout outlasts rollout_timeout_ms", async () => {
    const stepSleepMs = 100;
    const maxSteps = 100;
    const view = await runRollout({
      agent: "test-loop",
      rollout_id: uniqueId("rollout-timeout"),
      task: { problem: "Say hello.", extra_args: { step_sleep_ms: stepSleepMs } },
      config: { rollout_timeout_ms: 250, max_steps: maxSteps },
    });
    expect(view).toMatchObject({ status: "failed", termination_reason: "TIMEOUT" });
    expect(view.trajectory.steps.length).toBeLessThanOrEqual(2);
    // Not before its budget, and long before its max_steps would have ended it (bounds from the
    // configuration, not from how fast this machine is today).
    expect(view.finished_at! - view.created_at).toBeGreaterThanOrEqual(250);
    expect(view.finished_at! - view.created_at).toBeLessThan((maxSteps * stepSleepMs) / 2);
  });

  it("ends ENV_ERROR when env.step throws, keeping the steps committed before", async () => {
    const view = await runRollout({
      agent: "test-loop",
      rollout_id: uniqueId("env-error"),
      task: { ...hello, extra_args: { step_throws_at: 1 } },
    });
    expect(view).toMatchObject({ status: "failed", termination_reason: "ENV_ERROR" });
    expect(view.error).toBe("env.step threw Error: scripted env failure at step 1");
    expect(view.trajectory.steps.map((step) => step.step_index)).toEqual([0]);
  });

  it("ends AGENT_ERROR when agent.updateFromModel throws", async () => {
    const view = await runRollout({
      agent: "test-agent-throws",
      rollout_id: uniqueId("agent-throws"),
      task: hello,
    });
    expect(view).toMatchObject({ status: "failed", termination_reason: "AGENT_ERROR" });
    expect(view.error).toBe("agent.updateFromModel threw Error: scripted agent failure");
    expect(view.trajectory.steps).toHaveLength(0);
  });

  it("ends AGENT_ERROR when the agent's action is not a JSON value", async () => {
    const rolloutId = uniqueId("agent-non-json");
    const view = await runRollout({
      agent: "test-agent-non-json",
      rollout_id: rolloutId,
      task: hello,
    });
    expect(view).toMatchObject({ status: "failed", termination_reason: "AGENT_ERROR" });
    expect(view.error).toMatch(/^agent\.updateFromModel must return \{action: <JSON value>\}/);
    expect(envCalls(rolloutId).step).toBe(0);
  });

  it("ends MODEL_ERROR when the model server refuses the request", async () => {
    const view = await runRollout({
      agent: "calculator",
      rollout_id: uniqueId("model-error"),
      task: { problem: "Use the calculator to compute 6 * 7." },
      config: { model: "no-such-model" },
    });
    expect(view).toMatchObject({ status: "failed", termination_reason: "MODEL_ERROR" });
    expect(view.error).toMatch(/^upstream 404: /);
    expect(view.error).toContain("no-such-model");
    expect(view.llm_calls).toHaveLength(0);
  });
});

describe("cancelling", () => {
  it("cancels a running rollout with 200, and its driver commits nothing more", async () => {
    const rolloutId = await startRollout({
      agent: "test-loop",
      rollout_id: uniqueId("cancel"),
      task: { problem: "Say hello.", extra_args: { step_sleep_ms: 150 } },
      config: { max_steps: 100 },
    });
    await waitFor("a running rollout", async () =>
      (await getRollout(rolloutId)).status === "running" ? true : undefined,
    );
    const cancelled = await api(`/v1/rollouts/${rolloutId}/cancel`, { method: "POST" });
    expect(cancelled.status).toBe(200);
    expect(await cancelled.json()).toEqual({
      rollout_id: rolloutId,
      status: "cancelled",
      termination_reason: "CANCELLED",
    });
    const view = await waitForEnd(rolloutId);
    expect(view).toMatchObject({
      status: "cancelled",
      termination_reason: "CANCELLED",
      error: null,
    });
    const stepsAtCancel = view.trajectory.steps.length;
    // The driver was mid-step when cancelled: once it has closed its env, its last commit was refused.
    await waitFor("the driver to stop", async () =>
      envCalls(rolloutId).close === 1 ? true : undefined,
    );
    expect((await getRollout(rolloutId)).trajectory.steps).toHaveLength(stepsAtCancel);
  });

  it("answers 409 problem+json to cancelling a rollout that already ended", async () => {
    const rolloutId = uniqueId("cancel-twice");
    await startRollout({
      agent: "test-loop",
      rollout_id: rolloutId,
      task: { problem: "Say hello.", extra_args: { step_sleep_ms: 150 } },
    });
    expect((await api(`/v1/rollouts/${rolloutId}/cancel`, { method: "POST" })).status).toBe(200);
    const again = await api(`/v1/rollouts/${rolloutId}/cancel`, { method: "POST" });
    expect(again.status).toBe(409);
    expect(again.headers.get("content-type")).toBe("application/problem+json");
    expect(await again.json()).toMatchObject({
      status: 409,
      detail: `rollout ${rolloutId} already ended (cancelled)`,
    });
  });
});
