import { describe, expect, it } from "vitest";
import { maskRuns, maskTotals } from "../../../src/training/mask-display";
import { formatMessage, formatRollout, formatSample } from "../../../tools/cli/render-rollout";
import { newMessages } from "../../../src/sink/formats/conversation";
import type { ChatMessage } from "../../../src/schemas/chat";
import type { JsonValue } from "../../../src/schemas/json";
import { LlmCall, type LlmCallInput } from "../../../src/schemas/llm-call";
import { RolloutView } from "../../../src/schemas/rollout-api";
import { buildTrainingSamples } from "../../../src/training/sample-builder";

const system: ChatMessage = { role: "system", content: "Use the tool." };
const user: ChatMessage = { role: "user", content: "What is 6 * 7?" };
const toolCall: ChatMessage = {
  role: "assistant",
  content: null,
  tool_calls: [
    {
      id: "t1",
      type: "function",
      function: { name: "calculate", arguments: '{"expression":"6*7"}' },
    },
  ],
};
/** A request body as the gateway records it. */
const request = (messages: ChatMessage[]) => ({ messages: messages as unknown as JsonValue });

function call(
  overrides: Partial<LlmCallInput> &
    Pick<
      LlmCallInput,
      "call_id" | "request" | "response_message" | "prompt_token_ids" | "completion_token_ids"
    >,
): LlmCall {
  const logprobs = overrides.completion_token_ids.map(() => -0.5);
  return LlmCall.parse({
    rollout_id: "b:0:1",
    logprobs,
    logprobs_mode: "raw_logprobs",
    finish_reason: "stop",
    usage: {
      prompt_tokens: overrides.prompt_token_ids.length,
      completion_tokens: overrides.completion_token_ids.length,
      total_tokens: 0,
    },
    backend: "vllm",
    replica: "r0",
    latency_ms: 12,
    trainable: true,
    created_at: 0,
    ...overrides,
  });
}

const first = call({
  call_id: "c1",
  request: request([system, user]),
  response_message: toolCall,
  prompt_token_ids: [1, 2, 3],
  completion_token_ids: [4, 5],
  finish_reason: "tool_calls",
});
const second = call({
  call_id: "c2",
  request: request([system, user, toolCall, { role: "tool", tool_call_id: "t1", content: "42" }]),
  response_message: { role: "assistant", content: "It is 42." },
  prompt_token_ids: [1, 2, 3, 4, 5, 6, 7],
  completion_token_ids: [8],
});

describe("showing a rollout and its training mask (unit)", () => {
  it("splits a response mask into runs and counts trained and context tokens", () => {
    expect(maskRuns([1, 1, 0, 0, 1])).toEqual([
      { mask: 1, start: 0, length: 2 },
      { mask: 0, start: 2, length: 2 },
      { mask: 1, start: 4, length: 1 },
    ]);
    expect(maskRuns([])).toEqual([]);
    expect(maskTotals({ prompt_ids: [1, 2, 3], response_mask: [1, 1, 0, 0, 1] })).toEqual({
      prompt: 3,
      trained: 3,
      context: 2,
    });
  });

  it("prints only the messages a call added, and tool calls on their own line", () => {
    expect(newMessages(second, first).messages).toEqual([
      { role: "tool", tool_call_id: "t1", content: "42" },
    ]);
    expect(newMessages(first, undefined).messages).toHaveLength(2);
    expect(formatMessage(toolCall, 100)).toBe(
      '[assistant]\n  → tool call calculate({"expression":"6*7"}) id t1',
    );
  });

  it("labels each mask run: completions (mask 1) by call, tool results and template tokens as context (mask 0)", () => {
    const { samples } = buildTrainingSamples({
      rollout_id: "b:0:1",
      status: "succeeded",
      termination_reason: "ENV_DONE",
      reward: 1,
      calls: [first, second],
      uid: "b:0",
      sample_index: 1,
      mode: "cumulative",
    });
    const text = formatSample(
      samples[0]!,
      new Map([
        [first.call_id, first],
        [second.call_id, second],
      ]),
      { tokens: true },
    );
    expect(text).toContain(
      "prompt 3 tokens (context, not trained), response 5 tokens: 3 trained (mask 1), 2 context (mask 0)",
    );
    expect(text).toContain("mask 1  ×2     tokens 0..1  call 1 completion: tool call calculate");
    expect(text).toContain("mask 0  ×2     tokens 2..3  context: tool results");
    expect(text).toContain('mask 1  ×1     tokens 4..4  call 2 completion: "It is 42."');
    expect(text).toContain("[6, 7]");
  });

  it("marks the calls of a retried attempt as not trained in the conversation", () => {
    const retried = {
      ...call({
        call_id: "c0",
        request: request([system, user]),
        response_message: { role: "assistant", content: "oops" },
        prompt_token_ids: [1, 2, 3],
        completion_token_ids: [9],
      }),
      attempt: 1,
      excluded_from_training: true,
    };
    const view = RolloutView.parse({
      rollout_id: "b:0:1",
      agent: "calculator",
      status: "succeeded",
      termination_reason: "ENV_DONE",
      reward: 1,
      error: null,
      created_at: 0,
      updated_at: 0,
      finished_at: 1500,
      config: {},
      usage: { prompt_tokens: 13, completion_tokens: 4, llm_calls: 3 },
      trajectory: {
        task: { problem: "What is 6 * 7?", ground_truth: "42" },
        steps: [],
        trajectory_id: "b:0:1",
      },
      llm_calls: [retried, first, second],
      spans: [],
      final_messages: null,
    });
    const { samples, drift_splits } = buildTrainingSamples({
      rollout_id: view.rollout_id,
      status: view.status,
      termination_reason: view.termination_reason,
      reward: view.reward,
      calls: view.llm_calls,
      uid: "b:0",
      sample_index: 1,
      mode: "cumulative",
    });
    const text = formatRollout(view, samples, drift_splits);
    expect(text).toContain(
      "── call 1 · attempt 1 · prompt 3 tok · completion 1 tok · finish stop · policy v0 · 12ms · not trained: attempt 1 was retried",
    );
    expect(text).toMatch(/── call 2 .* trained \(mask 1\)/);
    expect(text).toContain("call 2 completion: tool call calculate");
    expect(text).toContain('ground truth: "42"');
  });
});
