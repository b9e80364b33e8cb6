/** @module Token-exact training samples in the shape of verl's AgentLoopOutput. */
import { z } from "zod";
import { JsonObject } from "./json";
import { Logprobs, TokenIds } from "./llm-call";
import { TerminationReason } from "./termination";

/** One 0/1 per response token: 1 for the engine's own tokens (trained), 0 for everything between calls. */
const ResponseMask = z.custom<(0 | 1)[]>(
  (value) => Array.isArray(value) && value.every((bit) => bit === 0 || bit === 1),
  "must be an array of 0 and 1",
);

/**
 * Version of the persisted TrainingSample shape. 2 (the third wave) adds the optional
 * `response_policy_versions`; every other field is as in 1, so a version-1 sample (stored in R2
 * before) still parses and reads as it is: the field absent means every token came from
 * `policy_version.start`. Where a group's signal lives (member outcomes, `valid_members`,
 * dropped groups) is the feed's wire, not the sample: a sample is only ever a policy outcome's.
 */
export const TRAINING_SAMPLE_SCHEMA_VERSION = 2;
/** Sample versions readers accept. */
const SampleVersion = z.union([z.literal(1), z.literal(TRAINING_SAMPLE_SCHEMA_VERSION)]);

/**
 * One training sample. `prompt_ids` is the first call's prompt; `response_ids` are everything
 * after it: the engine's completion tokens (mask 1, with their logprobs) and the tokens between
 * calls — tool results, environment text, chat-template glue — (mask 0, logprob 0.0). Tokens are
 * only ever copied from recorded calls, never produced by re-tokenizing text.
 */
export const TrainingSample = z
  .object({
    schema_version: SampleVersion.default(TRAINING_SAMPLE_SCHEMA_VERSION),
    /** The GRPO group (same prompt, `n` samples). */
    uid: z.string().min(1),
    /** Which of the group's `n` samples this is. */
    sample_index: z.int().min(0),
    rollout_id: z.string().min(1),
    /** 0 for the first sample of a rollout; more when the prefix broke (drift) or in per-call mode. */
    segment_index: z.int().min(0),
    // The token arrays are checked in one loop each, not per element: zod runs interpreted in
    // workerd, and per-element parsing of every sample showed in publication's CPU profiles.
    prompt_ids: TokenIds,
    response_ids: TokenIds,
    response_mask: ResponseMask,
    response_logprobs: Logprobs,
    reward_score: z.number(),
    num_turns: z.int().min(0),
    termination_reason: TerminationReason.nullable(),
    policy_version: z.object({ start: z.int().min(0), end: z.int().min(0) }),
    /**
     * The policy version that produced each response token (mask-0 context tokens: the version of
     * the call they lead into), the behaviour policy an off-policy correction needs per token. Set
     * only when the tokens span versions (a call an interrupting sync cut and resumed, or calls of
     * one sample made under different versions); absent, every token came from `policy_version.start`.
     */
    response_policy_versions: z
      .custom<number[]>(
        (value) => Array.isArray(value) && value.every((v) => Number.isInteger(v) && v >= 0),
        "must be an array of versions",
      )
      .optional(),
    extra_fields: JsonObject.default({}),
  })
  .superRefine((sample, ctx) => {
    const n = sample.response_ids.length;
    if (sample.response_mask.length !== n)
      ctx.addIssue({
        code: "custom",
        path: ["response_mask"],
        message: "response_mask must be as long as response_ids",
      });
    if (sample.response_logprobs.length !== n)
      ctx.addIssue({
        code: "custom",
        path: ["response_logprobs"],
        message: "response_logprobs must be as long as response_ids",
      });
    if (
      sample.response_policy_versions !== undefined &&
      sample.response_policy_versions.length !== n
    )
      ctx.addIssue({
        code: "custom",
        path: ["response_policy_versions"],
        message: "response_policy_versions must be as long as response_ids",
      });
  });
export type TrainingSample = z.infer<typeof TrainingSample>;
