/** Integration: what a calculator rollout records — tool call, tool result, and token-level LLM calls. */
import { beforeAll, describe, expect, it } from "vitest";
import type { LlmCall } from "../../../src/schemas/llm-call";
import type { RolloutView } from "../../../src/schemas/rollout-api";
import { runRollout, uniqueId } from "../../fixtures/rollouts";

let view: RolloutView;

beforeAll(async () => {
  view = await runRollout({
    agent: "calculator",
    rollout_id: uniqueId("calc"),
    task: { problem: "Use the calculator to compute 17 * 3 + 4.", ground_truth: "55" },
  });
});

describe("a calculator rollout", () => {
  it("ends ENV_DONE after a tool step and an answer step", () => {
    expect(view).toMatchObject({
      status: "succeeded",
      termination_reason: "ENV_DONE",
      error: null,
    });
    const steps = view.trajectory.steps;
    expect(steps.length).toBeGreaterThanOrEqual(2);
    expect(steps.map((step) => step.step_index)).toEqual(steps.map((_, index) => index));
    expect(steps.at(-1)?.done).toBe(true);
    expect(view.reward).toBe(steps.reduce((sum, step) => sum + step.reward, 0));
  });

  it("records the tool call in step 0's action and in its LLM call's response", () => {
    const step0 = view.trajectory.steps[0]!;
    const call0 = view.llm_calls.find((call) => call.call_id === step0.llm_call_ids[0])!;
    const [toolCall] = call0.response_message.tool_calls ?? [];
    expect(toolCall?.function.name).toBe("calculate");
    expect(JSON.parse(toolCall!.function.arguments)).toEqual({ expression: "17 * 3 + 4" });
    expect(call0.finish_reason).toBe("tool_calls");
    expect(step0.action).toEqual({
      tool_calls: [
        { id: toolCall!.id, name: "calculate", arguments: toolCall!.function.arguments },
      ],
    });
  });

  it("feeds the tool result back as step 0's next observation and a tool message in step 1's prompt", () => {
    const [step0, step1] = view.trajectory.steps;
    const toolCallId = (step0!.action as { tool_calls: Array<{ id: string }> }).tool_calls[0]!.id;
    expect(step0!.next_observation).toEqual({
      tool_results: [{ tool_call_id: toolCallId, name: "calculate", content: "55" }],
    });
    expect(step1!.chat_completions).toContainEqual({
      role: "tool",
      tool_call_id: toolCallId,
      content: "55",
    });
    expect(step1!.observation).toEqual(step0!.next_observation);
  });

  it("makes exactly one LLM call per step, linked both ways", () => {
    const steps = view.trajectory.steps;
    expect(view.llm_calls).toHaveLength(steps.length);
    expect(view.usage.llm_calls).toBe(steps.length);
    for (const step of steps) {
      expect(step.llm_call_ids).toHaveLength(1);
      expect(
        view.llm_calls.filter((call) => call.step_id === step.step_id).map((call) => call.call_id),
      ).toEqual(step.llm_call_ids);
    }
  });

  it("records prompt and completion token ids with one logprob per completion token", () => {
    for (const call of view.llm_calls) {
      expect(call.prompt_token_ids.length).toBeGreaterThan(0);
      expect(call.completion_token_ids.length).toBeGreaterThan(0);
      expect(call.logprobs).toHaveLength(call.completion_token_ids.length);
      expect(call).toMatchObject({ trainable: true, logprobs_mode: "raw_logprobs" });
    }
    const sum = (pick: (call: LlmCall) => number) =>
      view.llm_calls.reduce((total, call) => total + pick(call), 0);
    expect(view.usage.completion_tokens).toBe(sum((call) => call.completion_token_ids.length));
  });

  it("keeps the prompt append-only: each call's prompt starts with the previous prompt and completion", () => {
    const calls = view.llm_calls;
    for (let k = 0; k + 1 < calls.length; k++) {
      const previous = [...calls[k]!.prompt_token_ids, ...calls[k]!.completion_token_ids];
      expect(calls[k + 1]!.prompt_token_ids.slice(0, previous.length)).toEqual(previous);
      expect(calls[k + 1]!.prompt_token_ids.length).toBeGreaterThan(previous.length);
    }
  });
});
