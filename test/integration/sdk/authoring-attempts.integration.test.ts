/** Integration: function agents run as attempts: retries, the attempt counter, and which calls may train. */
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { driverDeps } from "../../../functions/work.consumer";
import { driveRollout } from "../../../src/runtime/driver/drive-rollout";
import { rolloutRecordKey } from "../../../src/sink/publication/r2-keys";
import { RolloutRecord } from "../../../src/sink/publication/rollout-record";
import { attemptsSeen, holdFirstAttempt } from "../../fixtures/authoring-agents";
import { createByHand, expireLease, readState } from "../../fixtures/hand-session";
import { runRollout, trainingCalls, uniqueId, waitFor, waitForEnd } from "../../fixtures/rollouts";

const math = { problem: "What is 6 * 7?", ground_truth: "42" };

describe("attempts of a function agent (integration)", () => {
  it("retries an attempt that crashed; the sample holds only the second attempt's calls", async () => {
    const rolloutId = uniqueId("crash-once");
    const view = await runRollout({
      agent: "authoring-fn-flaky",
      rollout_id: rolloutId,
      task: { ...math, extra_args: { crash_attempts: 1 } },
    });
    expect(view).toMatchObject({
      status: "succeeded",
      termination_reason: "ENV_DONE",
      attempts: 2,
      final_attempt: 2,
      error: null,
    });
    expect(attemptsSeen.get(rolloutId)).toEqual([1, 2]);
    expect(view.llm_calls.map((call) => [call.attempt, call.excluded_from_training])).toEqual([
      [1, true],
      [2, false],
    ]);
    expect(trainingCalls(view).map((call) => call.attempt)).toEqual([2]);
    expect(view.trajectory.steps.map((step) => step.llm_call_ids[0])).toEqual([
      view.llm_calls[1]!.call_id,
    ]);
    const failed = view.spans.find((span) => span.kind === "exception");
    expect(failed).toMatchObject({
      name: "attempt_crashed",
      attributes: { attempt: 1 },
      value: { outcome: "crashed", message: "attempt 1 threw Error: scripted crash in attempt 1" },
    });
  });

  it("publishes training samples cut only from the final attempt's calls", async () => {
    const rolloutId = uniqueId("crash-once-sink");
    const view = await runRollout({
      agent: "authoring-fn-flaky",
      rollout_id: rolloutId,
      task: { ...math, extra_args: { crash_attempts: 1 } },
    });
    const record = await waitFor("the published record", async () => {
      const object = await env.TRAJECTORIES.get(rolloutRecordKey(rolloutId));
      return object ? RolloutRecord.parse(await object.json()) : undefined;
    });
    const [first, second] = view.llm_calls;
    expect(record.samples.flatMap((sample) => sample.extra_fields.calls as string[])).toEqual([
      second!.call_id,
    ]);
    expect(record.samples[0]!.prompt_ids).toEqual(second!.prompt_token_ids);
    expect(record.samples[0]!.response_ids).toEqual(second!.completion_token_ids);
    expect(record.rollout.llm_calls.map((call) => call.call_id)).toEqual([
      first!.call_id,
      second!.call_id,
    ]);
  });

  it("fails AGENT_ERROR with the last error when every attempt crashes", async () => {
    const view = await runRollout({
      agent: "authoring-fn-flaky",
      rollout_id: uniqueId("crash-always"),
      task: { ...math, extra_args: { crash_attempts: 99 } },
      config: { max_attempts: 2 },
    });
    expect(view).toMatchObject({
      status: "failed",
      termination_reason: "AGENT_ERROR",
      reward: null,
      attempts: 2,
      final_attempt: 2,
    });
    expect(view.error).toBe(
      "attempt 2 threw Error: scripted crash in attempt 2; no attempts left (max_attempts 2)",
    );
    expect(view.llm_calls.map((call) => call.excluded_from_training)).toEqual([true, false]);
  });

  it("gives up an attempt that goes silent for step_timeout_ms and succeeds on the next", async () => {
    const rolloutId = uniqueId("hang-once");
    const view = await runRollout({
      agent: "authoring-fn-flaky",
      rollout_id: rolloutId,
      task: { ...math, extra_args: { hang_attempts: 1 } },
      config: { step_timeout_ms: 1_500 },
    });
    // The budget leaves room for a cold model call on a loaded machine; only the hung attempt outlasts it.
    expect(view).toMatchObject({ status: "succeeded", attempts: 2, final_attempt: 2 });
    expect(view.spans.find((span) => span.kind === "exception")).toMatchObject({
      name: "attempt_unresponsive",
      attributes: { attempt: 1 },
    });
    expect(
      (view.spans.find((span) => span.kind === "exception")!.value as { message: string }).message,
    ).toMatch(
      /^attempt 1 was given up: no model call, span or heartbeat for \d+ ms \(step_timeout_ms 1500\)$/,
    );
  });

  it("ends TIMEOUT when every attempt goes silent", async () => {
    const view = await runRollout({
      agent: "authoring-fn-flaky",
      rollout_id: uniqueId("hang-always"),
      task: { ...math, extra_args: { hang_attempts: 99 } },
      config: { step_timeout_ms: 200, max_attempts: 2 },
    });
    expect(view).toMatchObject({ status: "failed", termination_reason: "TIMEOUT", attempts: 2 });
    expect(view.error).toMatch(
      /^attempt 2 was given up: no model call, span or heartbeat for \d+ ms \(step_timeout_ms 200\); no attempts left \(max_attempts 2\)$/,
    );
  });

  it("persists the attempt counter before user code runs, so the next driver starts the next attempt after an invocation dies", async () => {
    const rolloutId = uniqueId("died-mid-attempt");
    await createByHand(rolloutId, { agent: "authoring-fn-flaky", task: math });
    const gate = holdFirstAttempt(rolloutId);
    const firstDriver = driveRollout(driverDeps(env), rolloutId);
    await waitFor("attempt 1 to be running", async () => (gate.entered() ? true : undefined));
    expect(await readState(rolloutId)).toMatchObject({ attempt: 1, status: "running" });
    // The invocation "dies": its lease runs out and the watchdog hands the rollout to the real consumer.
    await expireLease(rolloutId);
    expect(
      await runDurableObjectAlarm(
        env.ROLLOUT_SESSION.get(env.ROLLOUT_SESSION.idFromName(rolloutId)),
      ),
    ).toBe(true);
    const view = await waitForEnd(rolloutId);
    expect(view).toMatchObject({ status: "succeeded", attempts: 2, final_attempt: 2 });
    expect(view.spans.find((span) => span.name === "attempt_abandoned")).toMatchObject({
      kind: "exception",
      attributes: { attempt: 1 },
    });
    expect(view.llm_calls.map((call) => [call.attempt, call.excluded_from_training])).toEqual([
      [1, true],
      [2, false],
    ]);
    gate.release();
    expect(await firstDriver).toMatchObject({ result: "lost_lease" });
  });

  it("ends TIMEOUT when the invocation running the last attempt died", async () => {
    const rolloutId = uniqueId("died-last");
    await createByHand(rolloutId, {
      agent: "authoring-fn-flaky",
      task: math,
      config: { max_attempts: 1 },
    });
    const gate = holdFirstAttempt(rolloutId);
    const firstDriver = driveRollout(driverDeps(env), rolloutId);
    await waitFor("attempt 1 to be running", async () => (gate.entered() ? true : undefined));
    await expireLease(rolloutId);
    expect(await driveRollout(driverDeps(env), rolloutId)).toMatchObject({
      result: "finished",
      termination_reason: "TIMEOUT",
      attempts: 1,
    });
    const view = await waitForEnd(rolloutId);
    expect(view.error).toBe(
      "attempt 1 did not end: the invocation running it stopped and its lease expired; no attempts left (max_attempts 1)",
    );
    gate.release();
    await firstDriver;
  });
});
