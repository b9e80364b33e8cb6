/** Shared helpers for the sink tests: real LLM calls from the vLLM simulator, and views around them. */
import { expect } from "vitest";
import { CALCULATE_TOOL, runCalculate } from "../../../src/agents/calculator/calculate-tool";
import { createVllmBackend } from "../../../src/gateway/backends";
import { createGateway } from "../../../src/gateway/gateway";
import { type ModelClient, createModelClient } from "../../../src/gateway/model-client";
import type { ChatMessage } from "../../../src/schemas/chat";
import type { LlmCall } from "../../../src/schemas/llm-call";
import { RolloutConfig } from "../../../src/schemas/rollout-config";
import { RolloutView } from "../../../src/schemas/rollout-api";
import type { TrainingSample } from "../../../src/schemas/training-sample";
import type { VllmSimulator } from "../../../tools/simulator";
import type { z } from "zod";

/** A model client over the gateway and the simulator, as the step loop uses it. */
export function clientFor(sim: VllmSimulator): ModelClient {
  const backend = createVllmBackend({ baseUrl: `${sim.url}/v1` });
  return createModelClient(
    createGateway({
      policy: null,
      backendFor: () => backend,
      defaultModel: "sim-qwen3",
      retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
      now: Date.now,
    }),
  );
}

const LIMITS = {
  max_prompt_length: 131072,
  max_response_length: 4096,
  max_tokens_per_call: null,
  completion_tokens_used: 0,
  last_context_tokens: 0,
  last_context_messages: 0,
};

/** What a calculator conversation left: its recorded calls and the final message list. */
export interface Conversation {
  calls: LlmCall[];
  messages: ChatMessage[];
}

/** Per-call hooks of `calculatorConversation`. */
export interface ConversationOptions {
  /** Training mode for call `index` (default: always). */
  train?: (index: number) => boolean;
  /** Runs before call `index` is sent (e.g. to reconfigure the simulator). */
  beforeCall?: (index: number) => void;
}

/**
 * Drives a calculator conversation: each question is asked, tool calls are answered with the real
 * `calculate` tool, and the model's final answer is followed by the next question.
 */
export async function calculatorConversation(
  client: ModelClient,
  rolloutId: string,
  questions: string[],
  options: ConversationOptions = {},
): Promise<Conversation> {
  const messages: ChatMessage[] = [
    { role: "system", content: "You solve arithmetic problems with the calculate tool." },
  ];
  const calls: LlmCall[] = [];
  for (const question of questions) {
    messages.push({ role: "user", content: question });
    for (let turn = 0; turn < 4; turn++) {
      const index = calls.length;
      options.beforeCall?.(index);
      const context = {
        rolloutId,
        stepId: `${rolloutId}/step/${index}`,
        callId: `${rolloutId}/call/${index}`,
        train: options.train?.(index) ?? true,
        limits: LIMITS,
        replicaHint: null,
      };
      const { response, call } = await client.chat(
        { messages: [...messages], tools: [CALCULATE_TOOL], temperature: 1, topP: 1, seed: 7 },
        context,
      );
      calls.push(call);
      messages.push(response.message);
      if (response.toolCalls.length === 0) break;
      for (const toolCall of response.toolCalls)
        messages.push({
          role: "tool",
          tool_call_id: toolCall.id,
          content: runCalculate(toolCall.function.arguments),
        });
    }
  }
  return { calls, messages };
}

/** A finished rollout's view around `calls`; `overrides` replace top-level fields; `steps` are the trajectory's steps. */
export function viewOf(
  rolloutId: string,
  calls: LlmCall[],
  overrides: Partial<z.input<typeof RolloutView>> = {},
  steps: unknown[] = [],
): RolloutView {
  const task = { task_id: "t-1", problem: "What is 17 * (4 + 5)?" };
  return RolloutView.parse({
    rollout_id: rolloutId,
    agent: "calculator",
    status: "succeeded",
    termination_reason: "ENV_DONE",
    reward: 1,
    error: null,
    created_at: 1_760_000_000_000,
    updated_at: 1_760_000_005_000,
    finished_at: 1_760_000_005_000,
    config: RolloutConfig.parse({}),
    usage: { prompt_tokens: 0, completion_tokens: 0, llm_calls: calls.length },
    trajectory: { task, steps, trajectory_id: rolloutId },
    llm_calls: calls,
    spans: [],
    final_messages: null,
    ...overrides,
  });
}

/**
 * Checks a sample token for token against the calls it was cut from, written from the calls
 * alone: the last call's prompt + completion is the whole sequence, the first call's prompt is
 * `prompt_ids`, and each call's completion sits at its own prompt length with mask 1 and its
 * logprobs; every other response token is mask 0 with logprob 0.
 */
export function expectExactAgainst(sample: TrainingSample, calls: readonly LlmCall[]): void {
  const last = calls.at(-1)!;
  const full = [...last.prompt_token_ids, ...last.completion_token_ids];
  const offset = calls[0]!.prompt_token_ids.length;
  const mask: number[] = new Array<number>(full.length - offset).fill(0);
  const logprobs: number[] = new Array<number>(full.length - offset).fill(0);
  for (const call of calls) {
    const start = call.prompt_token_ids.length;
    expect(full.slice(start, start + call.completion_token_ids.length)).toEqual(
      call.completion_token_ids,
    );
    call.completion_token_ids.forEach((_, i) => {
      mask[start - offset + i] = 1;
      logprobs[start - offset + i] = call.logprobs[i]!;
    });
  }
  expect(sample.prompt_ids).toEqual(calls[0]!.prompt_token_ids);
  expect(sample.response_ids).toEqual(full.slice(offset));
  expect(sample.response_mask).toEqual(mask);
  expect(sample.response_logprobs).toEqual(logprobs);
  expect(sample.extra_fields.calls).toEqual(calls.map((call) => call.call_id));
}
