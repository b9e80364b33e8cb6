import { describe, expect, it } from "vitest";
import { type DrainSummary, formatDrainSummary } from "../../../tools/cli/commands/drain";
import type { DroppedGroup } from "../../../src/schemas/feed";

function dropped(
  uid: string,
  reason: DroppedGroup["reason"],
  extra: Partial<DroppedGroup> = {},
): DroppedGroup {
  return {
    uid,
    batch_id: "b",
    training_mode: "verl/hybrid",
    reason,
    group_size: 4,
    arrived: 4,
    max_staleness: 0,
    policy_version_start: 2,
    policy_version_end: 2,
    policy_version: 3,
    dropped_at: 0,
    ...extra,
  };
}

function summary(groups: DroppedGroup[]): DrainSummary {
  return {
    ok: true,
    out: "o.jsonl",
    stopped: "empty",
    pulls: 1,
    groups: 2,
    samples_pulled: 8,
    samples_written: 8,
    duplicates_skipped: 0,
    samples_in_file: 8,
    acked_leases: 1,
    expired_leases: 0,
    unacked_leases: 0,
    record_errors: [],
    dropped_groups: groups,
    feed: { pending_groups: 0, ready_groups: 0, leased_groups: 0 },
  };
}

describe("drain's summary of dropped groups (unit)", () => {
  it("says why each kind of group was dropped and counts them by reason", () => {
    const infra = dropped("b:0", "infra_failure", {
      failed_members: [
        {
          rollout_id: "b:0:3.retry-2",
          sample_index: 3,
          termination_reason: "MODEL_ERROR",
          outcome: "infra",
          member_attempt: 2,
        },
      ],
    });
    const text = formatDrainSummary(
      summary([
        infra,
        dropped("b:1", "no_signal", { metric: "acc", metric_std: 0 }),
        dropped("b:2", "stale"),
      ]),
    );
    expect(text).toContain(
      "3 groups of these batches were dropped by the feed, never delivered (infra_failure: e.g. b:0 held 1 member that failed for infrastructure (#3 MODEL_ERROR))",
    );
    expect(text).toContain("dropped by reason: infra_failure 1, no_signal 1, stale 1");
    expect(formatDrainSummary(summary([dropped("b:1", "no_signal", { metric: "acc" })]))).toContain(
      "b:1 had no signal: every member scored alike on acc",
    );
  });
});
