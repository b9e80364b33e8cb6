/** Integration: rollouts that end normally (succeeded) — ENV_DONE and the MAX_* limits, end to end. */
import { describe, expect, it } from "vitest";
import { runRollout, uniqueId } from "../../../fixtures/rollouts";
import "../../../fixtures/test-agents";

const neverDone = { problem: "Say hello.", extra_args: { done_after: null } };

describe("rollouts that end within their limits", () => {
  it("ends ENV_DONE when the calculator env says done, with the graded reward", async () => {
    const view = await runRollout({
      agent: "calculator",
      rollout_id: uniqueId("env-done"),
      task: { problem: "Use the calculator to compute 6 * 7.", ground_truth: "42" },
    });
    expect(view).toMatchObject({
      status: "succeeded",
      termination_reason: "ENV_DONE",
      error: null,
    });
    expect(view.trajectory.termination_reason).toBe("ENV_DONE");
    const last = view.trajectory.steps.at(-1)!;
    expect(last.done).toBe(true);
    expect(view.reward).toBe(last.reward);
    expect(last.info).toEqual({ correct: last.reward === 1 });
  });

  it("ends MAX_STEPS after exactly max_steps steps of an env that is never done", async () => {
    const view = await runRollout({
      agent: "test-loop",
      rollout_id: uniqueId("max-steps"),
      task: neverDone,
      config: { max_steps: 2 },
    });
    expect(view).toMatchObject({
      status: "succeeded",
      termination_reason: "MAX_STEPS",
      error: null,
      reward: 0,
    });
    expect(view.trajectory.steps.map((step) => step.step_index)).toEqual([0, 1]);
    expect(view.trajectory.steps.every((step) => !step.done)).toBe(true);
    expect(view.llm_calls).toHaveLength(2);
  });

  it("ends MAX_PROMPT_LENGTH before any model call when the first prompt is too long", async () => {
    const view = await runRollout({
      agent: "calculator",
      rollout_id: uniqueId("max-prompt"),
      task: { problem: "Use the calculator to compute 6 * 7." },
      config: { max_prompt_length: 20 },
    });
    expect(view).toMatchObject({ status: "succeeded", termination_reason: "MAX_PROMPT_LENGTH" });
    expect(view.error).toMatch(/^prompt of \d+ tokens exceeds max_prompt_length 20$/);
    expect(view.trajectory.steps).toHaveLength(0);
    expect(view.llm_calls).toHaveLength(0);
    expect(view.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, llm_calls: 0 });
  });

  it("ends MAX_PROMPT_LENGTH at the step whose prompt outgrows the limit", async () => {
    const first = await runRollout({
      agent: "test-loop",
      rollout_id: uniqueId("prompt-size"),
      task: neverDone,
      config: { max_steps: 1 },
    });
    const limit =
      first.llm_calls[0]!.prompt_token_ids.length + first.llm_calls[0]!.completion_token_ids.length;
    const view = await runRollout({
      agent: "test-loop",
      rollout_id: uniqueId("max-prompt-later"),
      task: neverDone,
      config: { max_prompt_length: limit, max_steps: 10 },
    });
    expect(view).toMatchObject({ status: "succeeded", termination_reason: "MAX_PROMPT_LENGTH" });
    expect(view.trajectory.steps.length).toBeGreaterThanOrEqual(1);
    for (const call of view.llm_calls)
      expect(call.prompt_token_ids.length).toBeLessThanOrEqual(limit);
  });

  it("ends MAX_RESPONSE_LENGTH with max_tokens clamped to what remains of the budget", async () => {
    const budget = 40;
    const view = await runRollout({
      agent: "test-loop",
      rollout_id: uniqueId("max-response"),
      task: neverDone,
      config: { max_response_length: budget, max_steps: 50 },
    });
    expect(view).toMatchObject({ status: "succeeded", termination_reason: "MAX_RESPONSE_LENGTH" });
    let used = 0;
    for (const call of view.llm_calls) {
      expect(call.request.max_tokens).toBe(budget - used);
      used += call.completion_token_ids.length;
      expect(used).toBeLessThanOrEqual(budget);
    }
    expect(used).toBe(budget);
    expect(view.usage.completion_tokens).toBe(budget);
  });

  it("caps each call at max_tokens_per_call within the response budget", async () => {
    const view = await runRollout({
      agent: "test-loop",
      rollout_id: uniqueId("per-call"),
      task: neverDone,
      config: { max_response_length: 100, max_tokens_per_call: 8, max_steps: 3 },
    });
    expect(view.termination_reason).toBe("MAX_STEPS");
    expect(view.llm_calls.map((call) => call.request.max_tokens)).toEqual([8, 8, 8]);
    for (const call of view.llm_calls)
      expect(call.completion_token_ids.length).toBeLessThanOrEqual(8);
  });
});
