/** @module Per-rollout limits and sampling settings, validated eagerly with field-named messages. */
import { z } from "zod";

const positiveInt = (field: string) =>
  z.int(`${field} must be an integer`).min(1, `${field} must be >= 1`);

/**
 * Limits and sampling for one rollout. Defaults follow the seed: 5 steps, 131072 prompt tokens,
 * 8192 response tokens over the whole trajectory. Timeouts are wall-clock milliseconds.
 */
export const RolloutConfig = z
  .object({
    /** Steps before the rollout ends with MAX_STEPS. Default 5. */
    max_steps: positiveInt("max_steps").max(1000, "max_steps must be <= 1000").default(5),
    /** Longest prompt (tokens) a model call may send; longer ends with MAX_PROMPT_LENGTH. Default 131072. */
    max_prompt_length: positiveInt("max_prompt_length").default(131072),
    /** Generated tokens allowed over the whole trajectory; `max_tokens` is clamped to what remains. Default 8192. */
    max_response_length: positiveInt("max_response_length").default(8192),
    /** Upper bound for one call's `max_tokens` (null = the remaining response budget). */
    max_tokens_per_call: positiveInt("max_tokens_per_call").nullable().default(null),
    /** One step (model call + env step) may take this long before the rollout ends with TIMEOUT. Default 120 s. */
    step_timeout_ms: positiveInt("step_timeout_ms").default(120_000),
    /** The whole rollout may take this long from creation before it ends with TIMEOUT. Default 30 min. */
    rollout_timeout_ms: positiveInt("rollout_timeout_ms").default(1_800_000),
    /** A driver hands the rollout off (re-enqueues it) after driving it this long in one invocation. Default 30 s. */
    slice_ms: positiveInt("slice_ms").default(30_000),
    /** Lease expirations without a committed step before the rollout fails with TIMEOUT. Default 3. */
    max_stalls: positiveInt("max_stalls").max(20, "max_stalls must be <= 20").default(3),
    /**
     * Attempts a function, LitAgent or workflow agent gets: a crash (throw) or going silent for
     * step_timeout_ms starts the next attempt until this many have run. Stepwise agents resume from
     * their last step instead and ignore it. Default 3.
     */
    max_attempts: positiveInt("max_attempts").max(10, "max_attempts must be <= 10").default(3),
    /** Sampling temperature sent to the model. Default 1.0. */
    temperature: z
      .number()
      .min(0, "temperature must be >= 0")
      .max(2, "temperature must be <= 2")
      .default(1),
    /** Nucleus sampling. Default 1.0. */
    top_p: z.number().gt(0, "top_p must be > 0").max(1, "top_p must be <= 1").default(1),
    /** Sampling seed passed to the engine (null = engine's choice). */
    seed: z.int().nullable().default(null),
    /** Model name; null uses the deployment's LLM_MODEL. */
    model: z.string().min(1).nullable().default(null),
    /** Discount of each step's Monte Carlo return (`Step.mc_return` = r_t + gamma · mc_return_{t+1}). Default 1. */
    gamma: z
      .number("gamma must be a number")
      .min(0, "gamma must be >= 0")
      .max(1, "gamma must be <= 1")
      .default(1),
    /** `train` asks the engine for logprobs; `val` does not need them. Default "train". */
    mode: z.enum(["train", "val"]).default("train"),
    /**
     * How training samples are cut from the rollout's calls: `cumulative` merges consecutive calls
     * whose prompts extend each other into one sample; `per_call` makes one sample per call.
     */
    sample_mode: z.enum(["cumulative", "per_call"]).default("cumulative"),
  })
  .strict();
export type RolloutConfig = z.infer<typeof RolloutConfig>;
/** A config as a caller sends it: every field optional. */
export type RolloutConfigInput = z.input<typeof RolloutConfig>;

/** The lease a driver holds must outlive one step, or a slow but healthy step would look stalled. */
export function leaseTtlMs(config: RolloutConfig): number {
  return config.step_timeout_ms + 15_000;
}
