import { describe, expect, it } from "vitest";
import {
  formatCounts,
  formatDuration,
  formatFields,
  formatNumber,
  formatTable,
  truncate,
} from "../../../tools/cli/format";
import {
  addTallies,
  emptyTally,
  finishedOf,
  rateAndEta,
  rewardMean,
  tallyOf,
} from "../../../tools/cli/progress-tally";
import { describeFrame, progressLine } from "../../../tools/cli/progress-view";
import { formatSubmitSummary, summarize } from "../../../tools/cli/submit-summary";
import type { BatchProgress } from "../../../src/schemas/batch";

function progress(
  counts: Partial<BatchProgress["counts"]>,
  reward: { mean: number | null; count: number },
  rollouts = 64,
): BatchProgress {
  const full = {
    not_released: 0,
    queued: 0,
    running: 0,
    succeeded: 0,
    failed: 0,
    cancelled: 0,
    ...counts,
  };
  return {
    batch_id: "b",
    agent: "calculator",
    mode: "train",
    training_mode: "verl/hybrid",
    data_manager: "train",
    dataset_key: null,
    status: "running",
    done: false,
    rows: rollouts / 4,
    n: 4,
    rollouts,
    released: rollouts - full.not_released,
    in_flight: full.queued + full.running,
    max_concurrent: 256,
    counts: full,
    termination_reasons: { ENV_DONE: full.succeeded },
    reward,
    retried: 0,
    groups: {
      target: null,
      complete: 0,
      delivered: 0,
      filtered: 0,
      withheld: 0,
      cut: 0,
      cut_at: null,
    },
    refill: { stale: 0, cancelled: 0, refilled: 0, unreplaced: 0, budget: 16, holding_since: null },
    created_at: 0,
    updated_at: 0,
    finished_at: null,
  };
}

describe("formatting for people (unit)", () => {
  it("formats durations, numbers, counts, tables and fields", () => {
    expect([
      formatDuration(850),
      formatDuration(12_340),
      formatDuration(245_000),
      formatDuration(7_380_000),
      formatDuration(-1),
    ]).toEqual(["850ms", "12.3s", "4m05s", "2h03m", "?"]);
    expect([formatNumber(0.6251), formatNumber(null), formatNumber(Number.NaN)]).toEqual([
      "0.625",
      "-",
      "-",
    ]);
    expect(formatCounts({ MAX_STEPS: 2, ENV_DONE: 12, TIMEOUT: 0 })).toBe(
      "ENV_DONE=12 MAX_STEPS=2",
    );
    expect(formatCounts({})).toBe("-");
    expect(
      formatTable([
        ["a", "bb"],
        ["ccc", 1],
      ]),
    ).toBe("a    bb\nccc  1");
    expect(
      formatFields([
        ["batch", "b1"],
        ["status", "done"],
      ]),
    ).toBe("batch:  b1\nstatus: done");
    expect(truncate("abcdef", 3)).toBe("abc… (3 more chars)");
  });

  it("adds batch tallies with an exact combined reward mean", () => {
    const a = tallyOf(
      progress({ succeeded: 4, running: 2, queued: 2 }, { mean: 0.5, count: 4 }, 8),
    );
    const b = tallyOf(progress({ succeeded: 2, failed: 2 }, { mean: 1, count: 2 }, 4));
    const sum = addTallies(a, b, emptyTally(4));
    expect(sum).toMatchObject({
      rollouts: 16,
      succeeded: 6,
      failed: 2,
      running: 2,
      queued: 2,
      not_released: 4,
      reward_count: 6,
    });
    expect(finishedOf(sum)).toBe(8);
    expect(rewardMean(sum)).toBeCloseTo(4 / 6);
    expect(rewardMean(emptyTally(3))).toBeNull();
    expect(sum.termination_reasons).toEqual({ ENV_DONE: 6 });
  });

  it("measures the rate from the watch's start and estimates the time left", () => {
    expect(rateAndEta(30, 10, 60, 4000)).toEqual({ rate: 5, etaMs: 6000 });
    expect(rateAndEta(10, 10, 60, 4000)).toEqual({ rate: 0, etaMs: null });
    expect(rateAndEta(60, 0, 60, 1000).etaMs).toBe(0);
  });

  it("prints a progress line with done/total, counts, reward, rate and ETA", () => {
    const tally = tallyOf(
      progress(
        { succeeded: 38, failed: 2, running: 6, queued: 10, not_released: 8 },
        { mean: 0.625, count: 40 },
      ),
    );
    const frame = { tally, elapsedMs: 12_300, rate: 5.25, etaMs: 4_600 };
    expect(describeFrame(frame)).toBe(
      "ok 38 failed 2 running 6 queued 18 | reward 0.625 | 5.3 rollouts/s | ETA 4.6s",
    );
    expect(progressLine(frame)).toBe(
      "[12.3s] 40/64 done (62%) ok 38 failed 2 running 6 queued 18 | reward 0.625 | 5.3 rollouts/s | ETA 4.6s",
    );
  });

  it("shows an over-sampled batch's groups against its target, and what was filtered, withheld, cut and retried", () => {
    const base = progress({ succeeded: 30, failed: 2, cancelled: 4 }, { mean: 0.5, count: 30 }, 36);
    const tally = tallyOf({
      ...base,
      retried: 3,
      groups: { target: 6, complete: 9, delivered: 6, filtered: 2, withheld: 1, cut: 0, cut_at: 1 },
    });
    expect(describeFrame({ tally, elapsedMs: 0, rate: 1, etaMs: null })).toBe(
      "ok 30 failed 2 cancelled 4 running 0 queued 0 | groups 6/6 filtered 2 withheld 1 retried 3 | reward 0.500 | 1.0 rollouts/s | ETA ?",
    );
    const sum = addTallies(
      tally,
      tallyOf({
        ...base,
        retried: 1,
        groups: {
          target: 4,
          complete: 5,
          delivered: 3,
          filtered: 0,
          withheld: 0,
          cut: 2,
          cut_at: null,
        },
      }),
    );
    expect(sum).toMatchObject({
      retried: 4,
      groups: { target: 10, delivered: 9, filtered: 2, withheld: 1, cut: 2 },
    });
  });

  it("shows groups lost to staleness and the slots refilled for them", () => {
    const base = progress({ succeeded: 28, cancelled: 8 }, { mean: 0.5, count: 28 }, 36);
    const tally = tallyOf({
      ...base,
      groups: { target: 6, complete: 9, delivered: 7, filtered: 0, withheld: 0, cut: 0, cut_at: 1 },
      refill: {
        stale: 1,
        cancelled: 2,
        refilled: 3,
        unreplaced: 0,
        budget: 16,
        holding_since: null,
      },
    });
    expect(describeFrame({ tally, elapsedMs: 0, rate: 1, etaMs: null })).toContain(
      "| groups 7/6 stale 1 cancelled 2 refilled 3 |",
    );
    expect(addTallies(tally, tally).groups).toMatchObject({ stale: 2, cancelled: 4, refilled: 6 });
  });

  it("summarizes a completed submission for scripts and for people", () => {
    const tally = tallyOf(progress({ succeeded: 60, failed: 4 }, { mean: 0.5, count: 64 }));
    const summary = summarize(
      {
        status: "completed",
        batch_ids: ["b"],
        agent: "calculator",
        mode: "train",
        dataset: "d.parquet",
        rows: 16,
        n: 4,
      },
      tally,
      8000,
    );
    expect(summary).toMatchObject({
      ok: true,
      rollouts: 64,
      finished: 64,
      succeeded: 60,
      failed: 4,
      reward_mean: 0.5,
      rollouts_per_s: 8,
    });
    const text = formatSubmitSummary(summary);
    expect(text).toContain("batch b: completed");
    expect(text).toContain(
      "finished 64/64 in 8.0s (8.0 rollouts/s): succeeded 60, failed 4, cancelled 0",
    );
    expect(text).toContain("next: npx edge-rollout drain");
    expect(
      summarize(
        {
          status: "cancelled",
          batch_ids: ["b"],
          agent: "a",
          mode: "val",
          dataset: "d",
          rows: 1,
          n: 1,
        },
        tally,
        1,
      ).ok,
    ).toBe(false);
  });
});
