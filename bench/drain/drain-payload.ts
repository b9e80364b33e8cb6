/** @module A synthetic `POST /v1/feed/pull` answer (inline samples) for `bench:drain`, deterministic. */
import { encodeArrowPull } from "../../src/runtime/feed/arrow-pull";
import type { PulledGroup } from "../../src/runtime/feed/inline-samples";
import type { FeedGroup, InlineFeedGroup, PullResponse } from "../../src/schemas/feed";
import { TrainingSample } from "../../src/schemas/training-sample";
import { samplesToColumns, sampleTableMetadata } from "../../src/sink/formats/sample-columns";
import { createRng } from "../../tools/simulator";

/** Shape of the payload. */
export interface DrainPayloadOptions {
  groups: number;
  /** Members per group (the GRPO group size); one sample each. */
  n: number;
  promptTokens: number;
  responseTokens: number;
}

/**
 * A multi-turn response: model turns (mask 1, float32 logprobs as vLLM returns them) alternating
 * with tool output (mask 0, logprob 0.0), token ids over a Qwen-sized vocabulary.
 */
function sample(
  random: () => number,
  uid: string,
  index: number,
  options: DrainPayloadOptions,
): Record<string, unknown> {
  const token = () => Math.floor(random() * 151_000);
  const response_mask = Array.from({ length: options.responseTokens }, (_, i) =>
    Math.floor(i / 256) % 4 === 3 ? 0 : 1,
  );
  return {
    schema_version: 1,
    uid,
    sample_index: index,
    rollout_id: `${uid}:${index}`,
    segment_index: 0,
    prompt_ids: Array.from({ length: options.promptTokens }, token),
    response_ids: Array.from({ length: options.responseTokens }, token),
    response_mask,
    response_logprobs: response_mask.map((mask) => (mask ? Math.fround(-random() * 4) : 0)),
    reward_score: random() < 0.5 ? 1 : 0,
    num_turns: 6,
    termination_reason: "ENV_DONE",
    policy_version: { start: 3, end: 3 },
    extra_fields: {
      trainable: true,
      failed: false,
      truncated: false,
      truncated_by: null,
      status: "succeeded",
      sample_mode: "cumulative",
    },
  };
}

/** The pull answer: `groups` complete groups of `n` members, one 2k-token-class sample each. */
export function drainPayload(options: DrainPayloadOptions): Record<string, unknown> {
  const random = createRng(42).next;
  const groups = Array.from({ length: options.groups }, (_, g) => {
    const uid = `bench:${g}`;
    const members = Array.from({ length: options.n }, (_, k) => {
      const samples = [sample(random, uid, k, options)];
      return {
        rollout_id: `${uid}:${k}`,
        sample_index: k,
        status: "succeeded",
        termination_reason: "ENV_DONE",
        reward: samples[0]!.reward_score,
        policy_version_start: 3,
        policy_version_end: 3,
        key: `rollouts/${uid}:${k}/record.json`,
        samples,
      };
    });
    return {
      uid,
      training_mode: "verl/hybrid",
      group_size: options.n,
      policy_version_start: 3,
      policy_version_end: 3,
      partial: false,
      deliveries: 1,
      members,
    };
  });
  return {
    lease_id: "lease-bench",
    lease_expires_at: Date.now() + 300_000,
    policy_version: 3,
    dropped_stale: 0,
    groups,
  };
}

/**
 * The same answer as the Arrow pull encodes it (`Accept: application/vnd.apache.arrow.stream`),
 * built by the Worker's own encoder from each member's samples.
 */
export function drainPayloadArrow(payload: Record<string, unknown>): Uint8Array {
  const { groups, ...response } = payload as unknown as PullResponse<InlineFeedGroup>;
  const pulled: PulledGroup[] = groups.map((group) => ({
    ...(group as Omit<FeedGroup, "members">),
    members: group.members.map((member) => {
      const samples = member.samples.map((s) => TrainingSample.parse(s));
      return {
        ...member,
        samples: samples.length,
        table: {
          columns: samplesToColumns(samples),
          length: samples.length,
          metadata: sampleTableMetadata(),
        },
      };
    }),
  }));
  return encodeArrowPull(response, pulled, 0);
}
