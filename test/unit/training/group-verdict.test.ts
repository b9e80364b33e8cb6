import { describe, expect, it } from "vitest";
import {
  groupVerdict,
  populationStd,
  type VerdictMember,
} from "../../../src/training/group-verdict";

function member(
  sample_index: number,
  outcome: VerdictMember["outcome"],
  metric: number | null = 1,
): VerdictMember {
  return {
    rollout_id: `r:${sample_index}`,
    sample_index,
    termination_reason:
      outcome === "policy" ? "ENV_DONE" : outcome === "cut" ? "CANCELLED" : "MODEL_ERROR",
    outcome,
    member_attempt: 0,
    metric,
  };
}
const plain = { signal_filter: null, on_infra_failure: "withhold" as const };
const filtered = {
  signal_filter: { metric: "reward", min_std: 0 },
  on_infra_failure: "withhold" as const,
};

describe("a complete group's verdict (unit)", () => {
  it("withholds a group with an infrastructure failure, and a cut member before anything else", () => {
    expect(groupVerdict([member(0, "policy"), member(1, "infra")], plain)).toMatchObject({
      kind: "withhold",
      reason: "infra_failure",
      failed: [{ sample_index: 1 }],
    });
    expect(groupVerdict([member(0, "cut"), member(1, "infra")], plain)).toMatchObject({
      kind: "withhold",
      reason: "cut",
      failed: [{ sample_index: 0 }, { sample_index: 1 }],
    });
  });

  it("withholds a group with a member ended STALE as cancelled, its cut siblings listed", () => {
    const stale = { ...member(0, "cut"), termination_reason: "STALE" as const };
    expect(groupVerdict([stale, member(1, "cut"), member(2, "policy")], plain)).toMatchObject({
      kind: "withhold",
      reason: "cancelled",
      failed: [{ sample_index: 0, termination_reason: "STALE" }, { sample_index: 1 }],
    });
  });

  it("delivers the valid members of an opted-in group only when at least two are valid, and filters them too", () => {
    const opted = { ...filtered, on_infra_failure: "deliver_valid" as const };
    expect(
      groupVerdict([member(0, "policy", 1), member(1, "policy", 0), member(2, "infra")], opted),
    ).toEqual({
      kind: "deliver_valid",
      valid: [0, 1],
      failed: [expect.objectContaining({ sample_index: 2 })],
    });
    expect(groupVerdict([member(0, "policy"), member(1, "infra")], opted)).toMatchObject({
      kind: "withhold",
      reason: "infra_failure",
    });
    expect(
      groupVerdict([member(0, "policy", 1), member(1, "policy", 1), member(2, "infra")], opted),
    ).toMatchObject({ kind: "withhold", reason: "no_signal", std: 0 });
  });

  it("filters groups at or below min_std, counts a missing metric as 0, and keeps a group of one as DAPO does", () => {
    expect(groupVerdict([member(0, "policy", 1), member(1, "policy", 1)], filtered)).toMatchObject({
      kind: "withhold",
      reason: "no_signal",
    });
    expect(
      groupVerdict([member(0, "policy", 0), member(1, "policy", null)], filtered),
    ).toMatchObject({ kind: "withhold", reason: "no_signal" });
    expect(
      groupVerdict([member(0, "policy", 1), member(1, "policy", 0)], {
        ...filtered,
        signal_filter: { metric: "reward", min_std: 0.5 },
      }),
    ).toMatchObject({ kind: "withhold", std: 0.5 });
    expect(groupVerdict([member(0, "policy", 1), member(1, "policy", 0)], filtered)).toEqual({
      kind: "deliver",
    });
    expect(groupVerdict([member(0, "policy", 1)], filtered)).toEqual({ kind: "deliver" });
    expect(populationStd([1, 0])).toBe(0.5);
  });
});
