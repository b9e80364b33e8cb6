/** Integration: a driver that dies mid-rollout, and how the next one resumes from committed steps. */
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { driveRollout } from "../../../../src/runtime/driver/drive-rollout";
import {
  createByHand,
  driverDepsDyingAtFinish,
  dyingDriverDeps,
  expireLease,
  readState,
} from "../../../fixtures/hand-session";
import { getRollout, runRollout, uniqueId, waitForEnd } from "../../../fixtures/rollouts";
import { envCalls } from "../../../fixtures/test-agents";

/** Runs the object's alarm now, as if the dead driver's lease had run out. */
async function runWatchdogAfterExpiry(rolloutId: string): Promise<void> {
  await expireLease(rolloutId);
  expect(
    await runDurableObjectAlarm(env.ROLLOUT_SESSION.get(env.ROLLOUT_SESSION.idFromName(rolloutId))),
  ).toBe(true);
}

/** Creates a rollout by hand, drives it until the 2nd model call kills the driver, then lets the watchdog hand it to the real consumer. */
async function dieAfterStepZeroThenResume(
  agent: string,
  rolloutId: string,
  task: Record<string, unknown> = { extra_args: { done_after: 3 } },
) {
  await createByHand(rolloutId, { agent, task });
  await expect(driveRollout(dyingDriverDeps(2), rolloutId)).rejects.toThrow("invocation died");
  const before = await getRollout(rolloutId);
  await runWatchdogAfterExpiry(rolloutId);
  return { before, after: await waitForEnd(rolloutId) };
}

describe("a driver that dies mid-rollout", () => {
  it("leaves step 0 committed and its lease held", async () => {
    const rolloutId = uniqueId("die");
    await createByHand(rolloutId, { task: { extra_args: { done_after: 3 } } });
    const deps = dyingDriverDeps(2);
    await expect(driveRollout(deps, rolloutId)).rejects.toThrow("invocation died");
    const state = await readState(rolloutId);
    expect(state).toMatchObject({
      status: "running",
      step_count: 1,
      llm_calls: 1,
      termination_reason: null,
    });
    expect(state.lease?.driver_id).toBe(deps.driverId);
    expect(state.lease!.expires_at).toBeGreaterThan(Date.now());
    expect((await getRollout(rolloutId)).trajectory.steps.map((step) => step.step_index)).toEqual([
      0,
    ]);
  });

  it("resumes from the last committed step once the watchdog re-enqueues it", async () => {
    const rolloutId = uniqueId("resume");
    const { before, after } = await dieAfterStepZeroThenResume("test-loop", rolloutId);
    const step0CallId = before.trajectory.steps[0]!.llm_call_ids[0];
    expect(after).toMatchObject({ status: "succeeded", termination_reason: "ENV_DONE" });
    const steps = after.trajectory.steps;
    expect(steps.map((step) => step.step_index)).toEqual([0, 1, 2]);
    expect(new Set(steps.map((step) => step.step_id)).size).toBe(3);
    expect(steps[0]!.llm_call_ids[0]).toBe(step0CallId);
    expect(after.llm_calls.map((call) => call.step_id)).toEqual(steps.map((step) => step.step_id));
    expect(after.llm_calls[0]!.call_id).toBe(step0CallId);
  });

  it("rebuilds the same conversation, tool calls included, so prompts stay append-only across the resume", async () => {
    const task = { problem: "Use the calculator to compute 12 * 12.", ground_truth: "144" };
    const { before, after } = await dieAfterStepZeroThenResume(
      "calculator",
      uniqueId("resume-prompt"),
      task,
    );
    expect(before.llm_calls[0]!.response_message.tool_calls).toHaveLength(1);
    expect(after).toMatchObject({ termination_reason: "ENV_DONE" });
    const [call0, call1] = after.llm_calls;
    const previous = [...call0!.prompt_token_ids, ...call0!.completion_token_ids];
    expect(call1!.prompt_token_ids.slice(0, previous.length)).toEqual(previous);
    expect(after.trajectory.steps[1]!.observation).toEqual(
      after.trajectory.steps[0]!.next_observation,
    );
  });

  it("finishes from storage when the driver died between its last commit and finish", async () => {
    const rolloutId = uniqueId("die-before-finish");
    await createByHand(rolloutId, { task: { extra_args: { done_after: 1 } } });
    await expect(driveRollout(driverDepsDyingAtFinish(), rolloutId)).rejects.toThrow(
      "invocation died",
    );
    expect(await readState(rolloutId)).toMatchObject({ status: "running", step_count: 1 });
    await runWatchdogAfterExpiry(rolloutId);
    const view = await waitForEnd(rolloutId);
    expect(view).toMatchObject({ status: "succeeded", termination_reason: "ENV_DONE", reward: 1 });
    expect(view.llm_calls).toHaveLength(1);
    expect(envCalls(rolloutId)).toMatchObject({ reset: 2, step: 2 }); // step 0 live, then replayed once
  });

  it("restores an env that has snapshot() instead of replaying its steps", async () => {
    const rolloutId = uniqueId("resume-snapshot");
    const { after } = await dieAfterStepZeroThenResume("test-snapshot", rolloutId);
    expect(after.trajectory.steps).toHaveLength(3);
    // Dead driver: reset + step 0. Resumed driver: reset + restore + steps 1 and 2.
    expect(envCalls(rolloutId)).toEqual({
      fromDict: 2,
      reset: 2,
      step: 3,
      snapshot: 3,
      restore: 1,
      close: 2,
    });
  });

  it("replays the committed actions into an env without snapshot()", async () => {
    const rolloutId = uniqueId("resume-replay");
    const { after } = await dieAfterStepZeroThenResume("test-loop", rolloutId);
    expect(after.trajectory.steps).toHaveLength(3);
    // Dead driver: reset + step 0. Resumed driver: reset + replayed step 0 + steps 1 and 2.
    expect(envCalls(rolloutId)).toEqual({
      fromDict: 2,
      reset: 2,
      step: 4,
      snapshot: 0,
      restore: 0,
      close: 2,
    });
  });
});

describe("a rollout handed off after every slice", () => {
  it("finishes with contiguous steps, each invocation resuming where the last stopped", async () => {
    const rolloutId = uniqueId("handoff");
    const view = await runRollout({
      agent: "test-snapshot",
      rollout_id: rolloutId,
      task: { problem: "Say hello.", extra_args: { done_after: 3 } },
      config: { slice_ms: 1 },
    });
    expect(view).toMatchObject({ status: "succeeded", termination_reason: "ENV_DONE" });
    expect(view.trajectory.steps.map((step) => step.step_index)).toEqual([0, 1, 2]);
    // One invocation per step (each hands off after its step), the last finishing: 3 resets, 2 restores.
    expect(envCalls(rolloutId)).toMatchObject({ reset: 3, step: 3, restore: 2 });
    expect(await readState(rolloutId)).toMatchObject({ handoffs: 2, stalls: 0 });
  });
});
