import { describe, expect, it } from "vitest";
import {
  TERMINAL_STATUSES,
  type RolloutStatus,
  TerminationReason,
  statusForReason,
} from "../../../src/schemas/termination";

/** Limits end a rollout normally, cancellation (and the staleness rule) cancels it, errors and timeouts fail it. */
const EXPECTED: Record<TerminationReason, RolloutStatus> = {
  ENV_DONE: "succeeded",
  MAX_STEPS: "succeeded",
  MAX_PROMPT_LENGTH: "succeeded",
  MAX_RESPONSE_LENGTH: "succeeded",
  TIMEOUT: "failed",
  ENV_ERROR: "failed",
  AGENT_ERROR: "failed",
  MODEL_ERROR: "failed",
  CANCELLED: "cancelled",
  STALE: "cancelled",
};

describe("statusForReason", () => {
  it("maps every termination reason to its status", () => {
    expect(Object.keys(EXPECTED).sort()).toEqual([...TerminationReason.options].sort());
    for (const reason of TerminationReason.options)
      expect(statusForReason(reason), reason).toBe(EXPECTED[reason]);
  });

  it("always yields a terminal status", () => {
    for (const reason of TerminationReason.options)
      expect(TERMINAL_STATUSES.has(statusForReason(reason))).toBe(true);
    expect(TERMINAL_STATUSES.has("queued")).toBe(false);
    expect(TERMINAL_STATUSES.has("running")).toBe(false);
  });
});
