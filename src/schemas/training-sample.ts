/** @module Token-exact training samples in the shape of verl's AgentLoopOutput. */
import { z } from "zod";
import { TerminationReason } from "./termination";

/** Version of the persisted TrainingSample shape. */
export const TRAINING_SAMPLE_SCHEMA_VERSION = 1;

/**
 * One training sample. `prompt_ids` is the first call's prompt; `response_ids` are everything
 * after it: the engine's completion tokens (mask 1, with their logprobs) and the tokens between
 * calls — tool results, environment text, chat-template glue — (mask 0, logprob 0.0). Tokens are
 * only ever copied from recorded calls, never produced by re-tokenizing text.
 */
export const TrainingSample = z.object({
  schema_version: z.literal(TRAINING_SAMPLE_SCHEMA_VERSION).default(TRAINING_SAMPLE_SCHEMA_VERSION),
  /** The GRPO group (same prompt, `n` samples). */
  uid: z.string().min(1),
  /** Which of the group's `n` samples this is. */
  sample_index: z.int().min(0),
  rollout_id: z.string().min(1),
  /** 0 for the first sample of a rollout; more when the prefix broke (drift) or in per-call mode. */
  segment_index: z.int().min(0),
  prompt_ids: z.array(z.int()),
  response_ids: z.array(z.int()),
  response_mask: z.array(z.union([z.literal(0), z.literal(1)])),
  response_logprobs: z.array(z.number()),
  reward_score: z.number(),
  num_turns: z.int().min(0),
  termination_reason: TerminationReason.nullable(),
  policy_version: z.object({ start: z.int().min(0), end: z.int().min(0) }),
  extra_fields: z.record(z.string(), z.json()).default({}),
}).superRefine((sample, ctx) => {
  const n = sample.response_ids.length;
  if (sample.response_mask.length !== n) ctx.addIssue({ code: "custom", path: ["response_mask"], message: "response_mask must be as long as response_ids" });
  if (sample.response_logprobs.length !== n) ctx.addIssue({ code: "custom", path: ["response_logprobs"], message: "response_logprobs must be as long as response_ids" });
});
export type TrainingSample = z.infer<typeof TrainingSample>;
