import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LlmCall } from "../../../src/schemas/llm-call";
import { TrainingSample } from "../../../src/schemas/training-sample";
import {
  type SampleBuildInput,
  buildTrainingSamples,
  untrainableReason,
} from "../../../src/training/sample-builder";
import {
  columnsToSamples,
  encodeSampleTable,
  readSampleTable,
} from "../../../src/sink/formats/sample-columns";
import {
  type VllmSimulator,
  decodeIds,
  startVllmSimulator,
  tokenizerFor,
} from "../../../tools/simulator";
import {
  type Conversation,
  calculatorConversation,
  clientFor,
  expectExactAgainst,
} from "../sink/sink-fixtures";

const QUESTIONS = ["What is 17 * (4 + 5)?", "And what is 3 + 4 * 2?"];

function inputFor(calls: LlmCall[], overrides: Partial<SampleBuildInput> = {}): SampleBuildInput {
  return {
    rollout_id: "r-s",
    status: "succeeded",
    termination_reason: "ENV_DONE",
    reward: 1,
    calls,
    uid: "g-1",
    sample_index: 2,
    mode: "cumulative",
    ...overrides,
  };
}

describe("buildTrainingSamples over an append-only template", () => {
  let sim: VllmSimulator;
  let talk: Conversation;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, seed: 5, successRate: 1, thinking: true });
    talk = await calculatorConversation(clientFor(sim), "r-s", QUESTIONS);
  });
  afterAll(() => sim.close());

  it("merges every call of a multi-turn conversation into one token-exact sample", () => {
    expect(talk.calls.map((call) => call.finish_reason)).toEqual([
      "tool_calls",
      "stop",
      "tool_calls",
      "stop",
    ]);
    const { samples, drift_splits } = buildTrainingSamples(inputFor(talk.calls));
    expect(drift_splits).toBe(0);
    expect(samples).toHaveLength(1);
    const [sample] = samples as [TrainingSample];
    expectExactAgainst(sample, talk.calls);
    expect(sample.response_mask.filter((bit) => bit === 1)).toHaveLength(
      talk.calls.reduce((n, call) => n + call.completion_token_ids.length, 0),
    );
    expect(sample).toMatchObject({
      uid: "g-1",
      sample_index: 2,
      rollout_id: "r-s",
      segment_index: 0,
      num_turns: 4,
      reward_score: 1,
      termination_reason: "ENV_DONE",
    });
    expect(sample.extra_fields).toMatchObject({
      trainable: true,
      failed: false,
      truncated: false,
      drift_splits: 0,
      untrainable_calls: 0,
    });
    expect(() => TrainingSample.parse(sample)).not.toThrow();
  });

  it("cuts one sample per call in per_call mode, each with its own prompt and all-ones mask", () => {
    const { samples, drift_splits } = buildTrainingSamples(
      inputFor(talk.calls, { mode: "per_call" }),
    );
    expect(drift_splits).toBe(0);
    expect(samples.map((sample) => sample.segment_index)).toEqual([0, 1, 2, 3]);
    samples.forEach((sample, i) => {
      const call = talk.calls[i]!;
      expect(sample.prompt_ids).toEqual(call.prompt_token_ids);
      expect(sample.response_ids).toEqual(call.completion_token_ids);
      expect(sample.response_logprobs).toEqual(call.logprobs);
      expect(sample.response_mask.every((bit) => bit === 1)).toBe(true);
      expect(sample.num_turns).toBe(1);
    });
  });

  it("takes the policy version range over the calls of each sample", () => {
    const versioned = talk.calls.map((call, i) => ({
      ...call,
      policy_version_start: 3 + i,
      policy_version_end: 4 + i,
    }));
    const [merged] = buildTrainingSamples(inputFor(versioned)).samples;
    expect(merged?.policy_version).toEqual({ start: 3, end: 7 });
    const perCall = buildTrainingSamples(inputFor(versioned, { mode: "per_call" })).samples;
    // The builder builds samples without parsing them: each must still be what readers accept.
    for (const sample of [merged, ...perCall]) expect(TrainingSample.parse(sample)).toEqual(sample);
    expect(perCall.map((sample) => sample.policy_version)).toEqual([
      { start: 3, end: 4 },
      { start: 4, end: 5 },
      { start: 5, end: 6 },
      { start: 6, end: 7 },
    ]);
  });

  it("scores every sample with the rollout's reward, and 0.0 flagged missing when there is none", () => {
    const scored = buildTrainingSamples(
      inputFor(talk.calls, { reward: 0.25, mode: "per_call" }),
    ).samples;
    expect(scored.map((sample) => sample.reward_score)).toEqual([0.25, 0.25, 0.25, 0.25]);
    expect(scored[0]?.extra_fields).not.toHaveProperty("reward_missing");
    const [unscored] = buildTrainingSamples(inputFor(talk.calls, { reward: null })).samples;
    expect(unscored?.reward_score).toBe(0);
    expect(unscored?.extra_fields.reward_missing).toBe(true);
  });

  it("still yields samples for failed and truncated rollouts, flagged for masking", () => {
    const [failed] = buildTrainingSamples(
      inputFor(talk.calls, { status: "failed", termination_reason: "MODEL_ERROR" }),
    ).samples;
    expect(failed?.extra_fields).toMatchObject({
      trainable: false,
      failed: true,
      truncated: false,
      status: "failed",
    });
    const [cancelled] = buildTrainingSamples(
      inputFor(talk.calls, { status: "cancelled", termination_reason: "CANCELLED" }),
    ).samples;
    expect(cancelled?.extra_fields).toMatchObject({ trainable: false, failed: true });
    const [capped] = buildTrainingSamples(
      inputFor(talk.calls, { termination_reason: "MAX_STEPS" }),
    ).samples;
    expect(capped?.extra_fields).toMatchObject({
      trainable: false,
      failed: false,
      truncated: true,
      truncated_by: "MAX_STEPS",
    });
    const cut = talk.calls.map((call, i) =>
      i === 3 ? { ...call, finish_reason: "length" } : call,
    );
    const [overlong] = buildTrainingSamples(
      inputFor(cut, { termination_reason: "MAX_RESPONSE_LENGTH" }),
    ).samples;
    expect(overlong?.extra_fields).toMatchObject({
      truncated: true,
      truncated_by: "MAX_RESPONSE_LENGTH",
    });
    const [lengthStop] = buildTrainingSamples(inputFor(cut)).samples;
    expect(lengthStop?.extra_fields).toMatchObject({
      trainable: false,
      truncated: true,
      truncated_by: "length",
    });
  });

  it("returns no samples for a rollout without calls", () => {
    expect(buildTrainingSamples(inputFor([]))).toEqual({ samples: [], drift_splits: 0 });
  });
});

describe("buildTrainingSamples with untrainable calls", () => {
  let sim: VllmSimulator;
  let talk: Conversation;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, seed: 6, successRate: 1 });
    // The second call runs in validation mode: no logprobs, recorded trainable: false.
    talk = await calculatorConversation(clientFor(sim), "r-u", QUESTIONS, {
      train: (index) => index !== 1,
    });
  });
  afterAll(() => sim.close());

  it("skips and counts them; their tokens stay in the sample as mask-0 context", () => {
    expect(talk.calls.map((call) => untrainableReason(call))).toEqual([
      null,
      "untrainable",
      null,
      null,
    ]);
    const { samples, drift_splits } = buildTrainingSamples(inputFor(talk.calls));
    expect(drift_splits).toBe(0);
    expect(samples).toHaveLength(1);
    const kept = talk.calls.filter((_, i) => i !== 1);
    expectExactAgainst(samples[0]!, kept);
    expect(samples[0]?.num_turns).toBe(3);
    expect(samples[0]?.extra_fields.untrainable_calls).toBe(1);
  });

  it("skips calls missing token ids or logprobs even when marked trainable", () => {
    const [first, , third] = talk.calls as [LlmCall, LlmCall, LlmCall];
    const noIds = { ...first, prompt_token_ids: [] };
    const noLogprobs = { ...third, logprobs: [] };
    expect([untrainableReason(noIds), untrainableReason(noLogprobs)]).toEqual([
      "missing_token_ids",
      "missing_logprobs",
    ]);
    const { samples } = buildTrainingSamples(inputFor([noIds, noLogprobs], { mode: "per_call" }));
    expect(samples).toEqual([]);
  });
});

describe("buildTrainingSamples when the template strips <think> from history", () => {
  let sim: VllmSimulator;
  beforeAll(async () => {
    sim = await startVllmSimulator({ port: 0, seed: 8, successRate: 1, stripThinkInHistory: true });
  });
  afterAll(() => sim.close());

  /** Checks every sample against the calls it names, and that together they cover every call once, in order. */
  function expectExactSegments(samples: TrainingSample[], calls: LlmCall[]): void {
    const byId = new Map(calls.map((call) => [call.call_id, call]));
    const covered: string[] = [];
    samples.forEach((sample, i) => {
      const ids = sample.extra_fields.calls as string[];
      covered.push(...ids);
      expect(sample.segment_index).toBe(i);
      expect(sample.extra_fields.segments).toBe(samples.length);
      expectExactAgainst(
        sample,
        ids.map((id) => byId.get(id)!),
      );
    });
    expect(covered).toEqual(calls.map((call) => call.call_id));
  }

  it("splits at every call when every answer thinks, and keeps each sample exact", async () => {
    sim.configure({ thinking: true });
    const talk = await calculatorConversation(clientFor(sim), "r-d", QUESTIONS);
    const { samples, drift_splits } = buildTrainingSamples(inputFor(talk.calls));
    expect(drift_splits).toBe(talk.calls.length - 1);
    expect(samples.every((sample) => sample.extra_fields.drift_splits === drift_splits)).toBe(true);
    expectExactSegments(samples, talk.calls);
  });

  it("merges calls until the first stripped <think>, then starts a new sample", async () => {
    // Calls 0-1 answer without thinking, so re-rendering them strips nothing; call 2 thinks, and
    // call 3's prompt re-renders call 2 without its <think>: exactly one split, before call 3.
    const talk = await calculatorConversation(clientFor(sim), "r-m", QUESTIONS, {
      beforeCall: (index) => sim.configure({ thinking: index >= 2 }),
    });
    const { samples, drift_splits } = buildTrainingSamples(inputFor(talk.calls));
    expect(drift_splits).toBe(1);
    expect(samples.map((sample) => sample.extra_fields.calls)).toEqual([
      ["r-m/call/0", "r-m/call/1", "r-m/call/2"],
      ["r-m/call/3"],
    ]);
    expect(samples.map((sample) => sample.num_turns)).toEqual([3, 1]);
    expectExactSegments(samples, talk.calls);
  });
});

describe("buildTrainingSamples over Qwen3's real tokenizer and chat template", () => {
  let sim: VllmSimulator;
  let talk: Conversation;
  const qwen3 = tokenizerFor("qwen3");
  beforeAll(async () => {
    sim = await startVllmSimulator({
      port: 0,
      seed: 5,
      successRate: 1,
      thinking: true,
      tokenizer: "qwen3",
    });
    talk = await calculatorConversation(clientFor(sim), "r-q", QUESTIONS);
  });
  afterAll(() => sim.close());

  it("splits exactly where the template dropped <think>: at the next user query, not inside a tool turn", () => {
    expect(talk.calls.map((call) => call.finish_reason)).toEqual([
      "tool_calls",
      "stop",
      "tool_calls",
      "stop",
    ]);
    const { samples, drift_splits } = buildTrainingSamples(inputFor(talk.calls));
    // The tool turn follows the last user query, so Qwen3 keeps its reasoning (calls 0-1 merge);
    // question 2 makes both earlier turns history, whose <think> the template drops.
    expect(drift_splits).toBe(1);
    expect(samples.map((sample) => sample.extra_fields.calls)).toEqual([
      ["r-q/call/0", "r-q/call/1"],
      ["r-q/call/2", "r-q/call/3"],
    ]);
    const [, second] = talk.calls.slice(1, 3) as [LlmCall, LlmCall];
    expect(
      decodeIds(qwen3, [
        ...talk.calls[1]!.prompt_token_ids,
        ...talk.calls[1]!.completion_token_ids,
      ]),
    ).toContain("<think>");
    expect(decodeIds(qwen3, second.prompt_token_ids)).not.toContain("<think>");
    for (const sample of samples)
      expectExactAgainst(
        sample,
        talk.calls.filter((call) => (sample.extra_fields.calls as string[]).includes(call.call_id)),
      );
  });

  it("trains every model token once and no template or tool-result token", () => {
    const { samples } = buildTrainingSamples(inputFor(talk.calls));
    for (const sample of samples) {
      const calls = talk.calls.filter((call) =>
        (sample.extra_fields.calls as string[]).includes(call.call_id),
      );
      const trained = sample.response_ids.filter((_, i) => sample.response_mask[i] === 1);
      expect(trained).toEqual(calls.flatMap((call) => call.completion_token_ids));
      const context = decodeIds(
        qwen3,
        sample.response_ids.filter((_, i) => sample.response_mask[i] === 0),
      );
      expect(context).toMatch(
        /^\n<\|im_start\|>user\n<tool_response>\n\d+\n<\/tool_response><\|im_end\|>\n<\|im_start\|>assistant\n$/,
      );
    }
  });
});

describe("buildTrainingSamples of a call an interrupting sync resumed", () => {
  const call = (overrides: Partial<LlmCall>): LlmCall => ({
    schema_version: 1,
    call_id: "c1",
    rollout_id: "r-v",
    step_id: null,
    request: {},
    response_message: { role: "assistant", content: "x" },
    prompt_token_ids: [1, 2, 3],
    completion_token_ids: [10, 11, 12, 13],
    logprobs: [-0.1, -0.2, -0.3, -0.4],
    logprobs_mode: "raw_logprobs",
    finish_reason: "stop",
    usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
    backend: "vllm",
    replica: "r",
    policy_version_start: 3,
    policy_version_end: 4,
    latency_ms: 1,
    attempts: 1,
    trainable: true,
    created_at: 0,
    attempt: null,
    excluded_from_training: false,
    purpose: "policy",
    ...overrides,
  });

  it("gives each response token the version that produced it, and counts the sample from its oldest token", () => {
    const first = call({
      policy_version_runs: [
        { from_token: 0, policy_version: 3 },
        { from_token: 2, policy_version: 4 },
      ],
    });
    const second = call({
      call_id: "c2",
      prompt_token_ids: [1, 2, 3, 10, 11, 12, 13, 20],
      completion_token_ids: [30],
      logprobs: [-0.5],
      policy_version_start: 4,
      policy_version_end: 4,
    });
    const [sample] = buildTrainingSamples(inputFor([first, second])).samples;
    expect(sample!.response_policy_versions).toEqual([3, 3, 4, 4, 4, 4]);
    expect(sample!.policy_version).toEqual({ start: 3, end: 4 });
    // The Arrow table the feed serves carries them too (in the row's extra_fields, the layout unchanged).
    const [back] = columnsToSamples(readSampleTable(encodeSampleTable([sample!])));
    expect(back!.response_policy_versions).toEqual([3, 3, 4, 4, 4, 4]);
    expect(back!.extra_fields).toEqual(sample!.extra_fields);
  });

  it("leaves the field out when every token came from one version", () => {
    const [sample] = buildTrainingSamples(inputFor([call({ policy_version_end: 3 })])).samples;
    expect(sample!.response_policy_versions).toBeUndefined();
  });
});
