/**
 * @module Whether a finished rollout may be scored: a policy outcome (its reward is real signal),
 * an infrastructure failure (retried or withheld, never scored) or cut (cancelled, never trained).
 * The one table of docs/verl.md ("What is retried and what is withheld") is this file.
 */
import { z } from "zod";
import type { TerminationReason } from "./termination";

/**
 * How a rollout's end counts for its GRPO group.
 * - `policy`: the policy's own doing (ENV_DONE, MAX_STEPS, MAX_*_LENGTH, the rollout's time used
 *   up while it ran, an error user code marked as the policy's fault with `PolicyError`);
 * - `infra`: something that was not the policy (MODEL_ERROR, ENV_ERROR / AGENT_ERROR raised by
 *   user code, a step or server that did not answer within `step_timeout_ms`, a lost runner, a
 *   crashed drive);
 * - `cut`: cancelled (a batch cancel, the surplus of an over-sampled batch, or STALE: too far
 *   behind the policy to be trained).
 */
export const MemberOutcome = z.enum(["policy", "infra", "cut"]);
export type MemberOutcome = z.infer<typeof MemberOutcome>;

/** Where the code that ended a rollout knows better than its reason alone (TIMEOUT, PolicyError). */
export type OutcomeHint = "policy" | "infra";

/**
 * The outcome of a rollout that ended with `reason`. `hint` decides for reasons that can be
 * either: TIMEOUT (a rollout out of time while it ran is `policy`; a stalled or silent one
 * `infra`, the default) and user-code errors (`policy` when raised as a PolicyError). A rollout
 * with no reason (a stand-in for a slot that never ran) is `infra`.
 */
export function outcomeOf(
  reason: TerminationReason | null,
  hint: OutcomeHint | null = null,
): MemberOutcome {
  switch (reason) {
    case "ENV_DONE":
    case "MAX_STEPS":
    case "MAX_PROMPT_LENGTH":
    case "MAX_RESPONSE_LENGTH":
      return "policy";
    case "CANCELLED":
    case "STALE":
      return "cut";
    case "TIMEOUT":
    case "ENV_ERROR":
    case "AGENT_ERROR":
      return hint ?? "infra";
    default:
      return "infra";
  }
}

/** Longest name of a reward dimension a filter may use. */
const MAX_METRIC_LENGTH = 64;

/**
 * DAPO's dynamic sampling: a complete group whose members' `metric` (the rollout's reward, or a
 * named reward dimension the agent emits, e.g. `acc`) has a population std at or below `min_std`
 * carries no GRPO gradient and is filtered (`no_signal`). `min_std: 0` filters groups whose
 * members all scored the same.
 */
export const SignalFilter = z
  .object({
    metric: z
      .string()
      .regex(
        /^[A-Za-z_][A-Za-z0-9_.-]*$/,
        'metric must be "reward" or the name of a reward dimension',
      )
      .max(MAX_METRIC_LENGTH, `metric must be at most ${MAX_METRIC_LENGTH} characters`)
      .default("reward"),
    min_std: z
      .number("min_std must be a number")
      .refine(Number.isFinite, "min_std must be finite")
      .refine((value) => value >= 0, "min_std must be >= 0")
      .default(0),
  })
  .strict();
export type SignalFilter = z.infer<typeof SignalFilter>;

/**
 * What happens to a complete group that still holds an infrastructure failure after retries:
 * `withhold` (default) drops it whole, reported like a stale drop; `deliver_valid` delivers its
 * valid members (at least 2) flagged `partial`, for an estimator that skips invalid rows.
 */
export const InfraFailurePolicy = z.enum(["withhold", "deliver_valid"]);
export type InfraFailurePolicy = z.infer<typeof InfraFailurePolicy>;

/** Most times one slot of a batch is re-run after infrastructure failures. */
export const MAX_MEMBER_RETRIES = 5;
