import { describe, expect, it } from "vitest";
import {
  attemptSteps,
  withTrainingExclusion,
} from "../../../../../src/runtime/session/kernel/attempt-view";
import { SessionState } from "../../../../../src/runtime/session/kernel/session-state";
import { LlmCall, type LlmCallInput } from "../../../../../src/schemas/llm-call";
import { RolloutConfig } from "../../../../../src/schemas/rollout-config";

const call = (id: string, attempt: number | null): LlmCall =>
  LlmCall.parse({
    call_id: id,
    rollout_id: "r",
    request: { messages: [{ role: "user", content: `question ${id}` }] },
    response_message: { role: "assistant", content: `answer ${id}` },
    prompt_token_ids: [1],
    completion_token_ids: [2],
    logprobs: [-1],
    logprobs_mode: "raw_logprobs",
    finish_reason: "stop",
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    backend: "vllm",
    replica: "r0",
    latency_ms: 3,
    trainable: true,
    created_at: 10,
    attempt,
  } satisfies LlmCallInput);

describe("withTrainingExclusion", () => {
  it("excludes every attempt's calls but the final attempt's", () => {
    const calls = [call("a", 1), call("b", 2), call("c", 2)];
    expect(
      calls.map((c) => withTrainingExclusion(c, { final_attempt: 2 }).excluded_from_training),
    ).toEqual([true, false, false]);
  });

  it("excludes nothing while no attempt is final (stepwise, external, running)", () => {
    expect(
      withTrainingExclusion(call("a", null), { final_attempt: null }).excluded_from_training,
    ).toBe(false);
    expect(
      withTrainingExclusion(call("a", 1), { final_attempt: null }).excluded_from_training,
    ).toBe(false);
  });

  it("reads a row stored before attempts existed as attempt null", () => {
    const { attempt: _attempt, excluded_from_training: _excluded, ...old } = call("a", null);
    expect(withTrainingExclusion(old as LlmCall, { final_attempt: null })).toMatchObject({
      attempt: null,
      excluded_from_training: false,
    });
  });
});

describe("attemptSteps", () => {
  it("makes one step per call of the final attempt, the last one carrying the reward", () => {
    const steps = attemptSteps("r", [call("a", 1), call("b", 2), call("c", 2)], {
      final_attempt: 2,
      reward: 0.5,
      termination_reason: "ENV_DONE",
    });
    expect(
      steps.map((step) => [
        step.step_id,
        step.llm_call_ids[0],
        step.observation,
        step.action,
        step.reward,
        step.done,
      ]),
    ).toEqual([
      ["r/attempt/2/step/0", "b", "question b", "answer b", 0, false],
      ["r/attempt/2/step/1", "c", "question c", "answer c", 0.5, true],
    ]);
  });
});

describe("persisted shapes from before attempts", () => {
  it("read with attempt fields defaulted", () => {
    const {
      attempt: _attempt,
      final_attempt: _final,
      ...oldState
    } = SessionState.parse({
      schema_version: 1,
      status: "running",
      termination_reason: null,
      reward: null,
      error: null,
      lease: { lease_id: "1:d", driver_id: "d", epoch: 1, expires_at: 1, steps_at_start: 0 },
      epoch: 1,
      stalls: 0,
      handoffs: 0,
      step_count: 0,
      prompt_tokens: 0,
      completion_tokens: 0,
      llm_calls: 0,
      last_context_tokens: 0,
      last_context_messages: 0,
      deadline: 1,
      updated_at: 1,
      finished_at: null,
    });
    expect(SessionState.parse(oldState)).toMatchObject({
      attempt: 0,
      final_attempt: null,
      lease: { attempts_at_start: 0 },
    });
    expect(RolloutConfig.parse({}).max_attempts).toBe(3);
    expect(RolloutConfig.safeParse({ max_attempts: 0 }).error!.issues[0]!.message).toBe(
      "max_attempts must be >= 1",
    );
  });
});
