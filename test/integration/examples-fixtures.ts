/** @module What the examples' integration tests check on every rollout: token-level calls, the published record. */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { messageText } from "../../src/schemas/chat";
import type { RolloutView } from "../../src/schemas/rollout-api";
import { rolloutRecordKey } from "../../src/sink/publication/r2-keys";
import { RolloutRecord } from "../../src/sink/publication/rollout-record";
import { waitFor } from "../fixtures/rollouts";

/** Every call is trainable and carries prompt and completion token ids with one logprob per completion token. */
export function expectTokenLevelCalls(view: RolloutView): void {
  expect(view.llm_calls.length).toBeGreaterThan(0);
  for (const call of view.llm_calls) {
    expect(call).toMatchObject({ trainable: true, logprobs_mode: "raw_logprobs" });
    expect(call.prompt_token_ids.length).toBeGreaterThan(0);
    expect(call.completion_token_ids.length).toBeGreaterThan(0);
    expect(call.logprobs).toHaveLength(call.completion_token_ids.length);
  }
}

/** The text of the last call's answer. */
export function lastAnswer(view: RolloutView): string {
  return messageText(view.llm_calls.at(-1)!.response_message);
}

/** The rollout's record once the sink has published it to R2. */
export function publishedRecord(rolloutId: string): Promise<RolloutRecord> {
  return waitFor(`the published record of ${rolloutId}`, async () => {
    const object = await env.TRAJECTORIES.get(rolloutRecordKey(rolloutId));
    return object ? RolloutRecord.parse(await object.json()) : undefined;
  });
}

/**
 * The conversation became one training sample: every call merged (each prompt extends the last
 * prompt + completion), the completions masked in and the rollout's reward on it.
 */
export async function expectOneSample(view: RolloutView): Promise<void> {
  const record = await publishedRecord(view.rollout_id);
  expect(record.drift_splits).toBe(0);
  expect(record.samples).toHaveLength(1);
  const [sample] = record.samples;
  expect(sample!.extra_fields.calls).toEqual(view.llm_calls.map((call) => call.call_id));
  expect(sample!.prompt_ids).toEqual(view.llm_calls[0]!.prompt_token_ids);
  expect(sample!.response_mask.filter((bit) => bit === 1)).toHaveLength(
    view.llm_calls.reduce((total, call) => total + call.completion_token_ids.length, 0),
  );
  expect(sample!.reward_score).toBe(view.reward);
}
