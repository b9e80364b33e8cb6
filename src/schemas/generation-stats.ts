/**
 * @module What a rollout's model calls generated, as partial rollouts see it: calls an interrupting
 * weight sync cut, calls that went on under the new weights from the tokens kept, and completion
 * tokens per policy version. Carried on the result message, summed in `GET /v1/feed/stats`.
 */
import { z } from "zod";

/** Most policy versions one rollout's tokens are counted under (a rollout spans a few syncs). */
export const MAX_GENERATION_VERSIONS = 64;

/** One rollout's generation counts. */
export const GenerationStats = z.object({
  /** Calls an `interrupt` sync cut at least once. */
  calls_interrupted: z.int().min(0),
  /** Cut calls that kept tokens and went on under a newer version (a call cut before its first token restarts instead). */
  calls_resumed: z.int().min(0),
  /** Completion tokens by the policy version that generated them (keys: the version as a decimal string). */
  tokens_by_policy_version: z
    .record(z.string().regex(/^\d+$/, "keys must be policy versions"), z.int().min(0))
    .refine(
      (byVersion) => Object.keys(byVersion).length <= MAX_GENERATION_VERSIONS,
      `at most ${MAX_GENERATION_VERSIONS} policy versions`,
    ),
});
export type GenerationStats = z.infer<typeof GenerationStats>;
