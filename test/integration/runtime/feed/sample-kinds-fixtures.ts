/**
 * @module Finished rollouts of every sample kind, published through the real sink
 * (`publishRollout`: record, ATIF and sample table in R2), for the feed's format tests.
 */
import { env } from "cloudflare:workers";
import { r2Blobs } from "../../../../src/sink/publication/r2-blobs";
import { LlmCall } from "../../../../src/schemas/llm-call";
import type { ResultMessage } from "../../../../src/schemas/result-message";
import { RolloutView } from "../../../../src/schemas/rollout-api";
import { RolloutConfig } from "../../../../src/schemas/rollout-config";
import { statusForReason, type TerminationReason } from "../../../../src/schemas/termination";
import { publishRollout } from "../../../../src/sink/publication/publish-rollout";
import { uniqueId } from "../../../fixtures/rollouts";

/** One recorded call: prompt ids, completion ids, logprobs (empty: recorded without them). */
type CallShape = [prompt: number[], completion: number[], logprobs: number[]];

/** A rollout to publish: how it ended and the calls it made. */
export interface RolloutShape {
  reason: TerminationReason;
  calls: CallShape[];
  reward?: number;
  /** How the end counts (default by reason: an AGENT_ERROR is an infrastructure failure). */
  outcome?: "policy" | "infra";
}

/**
 * Every kind of sample a pull carries: a multi-turn sample (tool tokens masked 0) with logprobs
 * that are not float32 values, drift segments, an untrainable (truncated) sample, a call without
 * logprobs beside one with them, a failed rollout's flagged sample, and a failed rollout with no
 * sample at all (the trainer's placeholder).
 */
export const SAMPLE_KINDS: Record<string, RolloutShape> = {
  multi_turn: {
    reason: "ENV_DONE",
    reward: 1,
    calls: [
      [
        [1, 2, 3],
        [10, 11],
        [-0.1, -0.2],
      ],
      [
        [1, 2, 3, 10, 11, 20, 21],
        [12, 13],
        [-0.3, -0.4],
      ],
    ],
  },
  drift: {
    reason: "ENV_DONE",
    reward: 0.5,
    calls: [
      [[1, 2], [5], [-0.5]],
      [
        [9, 9, 9],
        [6, 7],
        [-0.25, -1.5],
      ],
    ],
  },
  untrainable: {
    reason: "MAX_STEPS",
    reward: 0,
    calls: [
      [
        [4, 4],
        [150_000, 2_000_000_000],
        [Math.fround(-0.7), -2],
      ],
    ],
  },
  missing_logprobs: {
    reason: "ENV_DONE",
    reward: 1,
    calls: [
      [[7], [8, 9], [-0.125, -0.0625]],
      [[7, 8, 9, 30], [31], []],
    ],
  },
  // Failures that are the policy's (a PolicyError): delivered in their group, masked.
  failed: { reason: "AGENT_ERROR", reward: 0, outcome: "policy", calls: [[[3, 3, 3], [40], [-3]]] },
  no_sample: { reason: "AGENT_ERROR", outcome: "policy", calls: [] },
};

function viewOf(rolloutId: string, shape: RolloutShape, version: number): RolloutView {
  const now = Date.now();
  const status = statusForReason(shape.reason);
  const calls = shape.calls.map(([prompt, completion, logprobs], i) =>
    LlmCall.parse({
      call_id: `${rolloutId}/call/${i}`,
      rollout_id: rolloutId,
      step_id: `${rolloutId}/step/${i}`,
      request: { messages: [{ role: "user", content: "q" }] },
      response_message: { role: "assistant", content: "a" },
      prompt_token_ids: prompt,
      completion_token_ids: completion,
      logprobs,
      logprobs_mode: "raw_logprobs",
      finish_reason: "stop",
      usage: {
        prompt_tokens: prompt.length,
        completion_tokens: completion.length,
        total_tokens: prompt.length + completion.length,
      },
      backend: "vllm",
      replica: "r0",
      policy_version_start: version,
      policy_version_end: version,
      latency_ms: 1,
      trainable: true,
      created_at: now,
    }),
  );
  const reward = shape.reward ?? null;
  return RolloutView.parse({
    rollout_id: rolloutId,
    agent: "math",
    status,
    termination_reason: shape.reason,
    reward,
    error: status === "failed" ? "boom" : null,
    outcome: shape.outcome ?? null,
    created_at: now - 10,
    updated_at: now,
    finished_at: now,
    config: RolloutConfig.parse({}),
    usage: { prompt_tokens: 0, completion_tokens: 0, llm_calls: calls.length },
    trajectory: {
      task: { problem: "q" },
      steps: [],
      reward,
      trajectory_id: rolloutId,
      termination_reason: shape.reason,
    },
    llm_calls: calls,
    spans: [],
    final_messages: null,
  });
}

/**
 * Publishes one group of `shapes` (member k is `shapes[k]`) under `batchId` through the real sink
 * and returns the result messages the sink sent, for the caller to ingest.
 */
export async function publishKinds(
  batchId: string,
  shapes: RolloutShape[],
  version = 0,
): Promise<{ uid: string; messages: ResultMessage[] }> {
  const uid = `${batchId}:${uniqueId("row")}`;
  const messages: ResultMessage[] = [];
  const deps = {
    blobs: r2Blobs(env.TRAJECTORIES),
    results: { send: async (m: ResultMessage) => void messages.push(m) },
    now: Date.now,
  };
  for (const [k, shape] of shapes.entries()) {
    const placement = {
      uid,
      sample_index: k,
      group_size: shapes.length,
      batch_id: batchId,
      training_mode: "verl/hybrid",
      data_manager: "train" as const,
    };
    await publishRollout(deps, viewOf(`${uid}:${k}`, shape, version), placement);
  }
  return { uid, messages };
}
