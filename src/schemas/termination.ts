/** @module Why and how a rollout ended. */
import { z } from "zod";

/** Why a rollout stopped (the seed's termination reasons). */
export const TerminationReason = z.enum([
  "ENV_DONE",
  "MAX_STEPS",
  "MAX_PROMPT_LENGTH",
  "MAX_RESPONSE_LENGTH",
  "TIMEOUT",
  "ENV_ERROR",
  "AGENT_ERROR",
  "MODEL_ERROR",
  "CANCELLED",
  /**
   * Ended while it ran because it could no longer be trained: the policy version moved more than
   * its training mode's `max_staleness` past its oldest token's (src/training/staleness.ts).
   */
  "STALE",
]);
export type TerminationReason = z.infer<typeof TerminationReason>;

/** Lifecycle of a rollout: `queued` until a driver leases it, then `running`, then one terminal state. */
export const RolloutStatus = z.enum(["queued", "running", "succeeded", "failed", "cancelled"]);
export type RolloutStatus = z.infer<typeof RolloutStatus>;

/** Terminal states: nothing changes a rollout once it is in one of these. */
export const TERMINAL_STATUSES: ReadonlySet<RolloutStatus> = new Set([
  "succeeded",
  "failed",
  "cancelled",
]);

/**
 * The status a termination reason implies. Limits (steps, lengths) end a rollout normally, so its
 * sample is still usable (flagged as truncated); errors and timeouts fail it.
 */
export function statusForReason(reason: TerminationReason): RolloutStatus {
  switch (reason) {
    case "ENV_DONE":
    case "MAX_STEPS":
    case "MAX_PROMPT_LENGTH":
    case "MAX_RESPONSE_LENGTH":
      return "succeeded";
    case "CANCELLED":
    case "STALE":
      return "cancelled";
    default:
      return "failed";
  }
}
