/** Unit: ProgressTap, which hands a stream's chunks to its sink in batches at the sink's cadence (tokens or time). */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { VersionRun } from "../../../src/gateway/interruptible";
import {
  DEFAULT_PROGRESS_CADENCE,
  type ProgressBatch,
  type ProgressCadence,
  ProgressTap,
} from "../../../src/gateway/stream-progress";

const RUNS: VersionRun[] = [{ from_token: 0, policy_version: 3 }];

/** A sink that records every batch it is given, and a clock the test moves by hand. */
function tapWith(cadence: ProgressCadence, keep?: (batch: ProgressBatch) => void) {
  const batches: ProgressBatch[] = [];
  let abandoned = 0;
  let time = 1_000;
  const tap = new ProgressTap(
    {
      cadence,
      keep: (batch) => {
        keep?.(batch);
        batches.push(batch);
      },
      abandon: () => {
        abandoned += 1;
      },
    },
    () => time,
  );
  return {
    tap,
    batches,
    abandoned: () => abandoned,
    advance: (ms: number) => {
      time += ms;
    },
  };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("DEFAULT_PROGRESS_CADENCE", () => {
  it("writes every 128 tokens or every 2 s", () => {
    expect(DEFAULT_PROGRESS_CADENCE).toEqual({ tokens: 128, ms: 2_000 });
  });
});

describe("ProgressTap", () => {
  it("keeps nothing before the cadence is reached", () => {
    const { tap, batches, advance } = tapWith({ tokens: 10, ms: 1_000 });
    tap.add("a", 4);
    tap.maybeKeep(RUNS, 0);
    tap.add("b", 5);
    advance(999);
    tap.maybeKeep(RUNS, 0);
    expect(batches).toEqual([]);
  });

  it("writes one batch once `tokens` tokens arrived: payloads in order, their token count, runs and interrupted as given", () => {
    const { tap, batches } = tapWith({ tokens: 5, ms: 60_000 });
    const runs: VersionRun[] = [
      { from_token: 0, policy_version: 1 },
      { from_token: 3, policy_version: 2 },
    ];
    tap.add("first", 2);
    tap.maybeKeep(runs, 1);
    tap.add("second", 1);
    tap.maybeKeep(runs, 1);
    tap.add("third", 2);
    tap.maybeKeep(runs, 1);
    expect(batches).toEqual([
      { payloads: ["first", "second", "third"], tokens: 5, runs, interrupted: 1 },
    ]);
  });

  it("starts the next batch empty after a write, so no chunk is written twice", () => {
    const { tap, batches } = tapWith({ tokens: 2, ms: 60_000 });
    tap.add("a", 2);
    tap.maybeKeep(RUNS, 0);
    tap.add("b", 1);
    tap.maybeKeep(RUNS, 0);
    expect(batches).toHaveLength(1);
    tap.add("c", 1);
    tap.maybeKeep(RUNS, 0);
    expect(batches.map((batch) => batch.payloads)).toEqual([["a"], ["b", "c"]]);
    expect(batches.map((batch) => batch.tokens)).toEqual([2, 2]);
  });

  it("writes more tokens than the cadence as one batch when a chunk overshoots it", () => {
    const { tap, batches } = tapWith({ tokens: 3, ms: 60_000 });
    tap.add("big", 7);
    tap.maybeKeep(RUNS, 0);
    expect(batches).toEqual([{ payloads: ["big"], tokens: 7, runs: RUNS, interrupted: 0 }]);
  });

  it("writes on time (`ms` since the last write) with any tokens pending", () => {
    const { tap, batches, advance } = tapWith({ tokens: 100, ms: 500 });
    tap.add("slow", 1);
    advance(499);
    tap.maybeKeep(RUNS, 0);
    expect(batches).toEqual([]);
    advance(1);
    tap.maybeKeep(RUNS, 0);
    expect(batches).toEqual([{ payloads: ["slow"], tokens: 1, runs: RUNS, interrupted: 0 }]);
  });

  it("counts the time from the last write, not from the first", () => {
    const { tap, batches, advance } = tapWith({ tokens: 100, ms: 500 });
    tap.add("a", 1);
    advance(500);
    tap.maybeKeep(RUNS, 0);
    tap.add("b", 1);
    advance(499);
    tap.maybeKeep(RUNS, 0);
    expect(batches).toHaveLength(1);
    advance(1);
    tap.maybeKeep(RUNS, 0);
    expect(batches.map((batch) => batch.payloads)).toEqual([["a"], ["b"]]);
  });

  it("never writes a batch of 0 tokens: chunks without tokens ride along with the next batch", () => {
    const { tap, batches, advance } = tapWith({ tokens: 2, ms: 500 });
    tap.add("role", 0);
    advance(10_000);
    tap.maybeKeep(RUNS, 0);
    tap.add("usage-less", 0);
    tap.maybeKeep(RUNS, 0);
    expect(batches).toEqual([]);
    tap.add("token", 1);
    tap.maybeKeep(RUNS, 0);
    expect(batches).toEqual([
      { payloads: ["role", "usage-less", "token"], tokens: 1, runs: RUNS, interrupted: 0 },
    ]);
    expect(batches.every((batch) => batch.tokens > 0)).toBe(true);
  });

  it("does nothing on maybeKeep with nothing added, however much time passed", () => {
    const { tap, batches, advance } = tapWith({ tokens: 1, ms: 1 });
    advance(60_000);
    tap.maybeKeep(RUNS, 0);
    expect(batches).toEqual([]);
  });

  it("does not throw out of maybeKeep when its sink throws, logs it, abandons what was kept and keeps nothing more (no gap)", () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    let fail = true;
    const { tap, batches, abandoned } = tapWith({ tokens: 1, ms: 60_000 }, () => {
      if (fail) throw new Error("SQLITE_FULL");
    });
    tap.add("a", 1);
    expect(() => tap.maybeKeep(RUNS, 0)).not.toThrow();
    expect(logged).toHaveBeenCalledTimes(1);
    expect(String(logged.mock.calls[0]!.join(" "))).toContain("SQLITE_FULL");
    expect(abandoned()).toBe(1);
    // A later batch would sit after a hole: the call restarts whole instead of resuming from it.
    fail = false;
    tap.add("b", 1);
    tap.maybeKeep(RUNS, 0);
    expect(batches).toEqual([]);
  });
});
