import { describe, expect, it } from "vitest";
import { batchThroughput } from "../../../../src/runtime/batch/batch-throughput";

const counts = {
  not_released: 50,
  queued: 10,
  running: 10,
  succeeded: 20,
  failed: 5,
  cancelled: 5,
};

describe("batchThroughput (unit)", () => {
  it("divides finished rollouts by the time since creation and projects the rest at that pace", () => {
    const pace = batchThroughput(
      { counts, rollouts: 100, created_at: 0, finished_at: null, done: false },
      10_000,
    );
    expect(pace).toMatchObject({ finished: 30, remaining: 70, elapsed_ms: 10_000 });
    expect(pace.per_second).toBeCloseTo(3, 12);
    expect(pace.eta_ms).toBeCloseTo((70 / 3) * 1000, 6);
  });

  it("has no pace before anything finished, and no time left once done", () => {
    const zero = { ...counts, succeeded: 0, failed: 0, cancelled: 0 };
    expect(
      batchThroughput(
        { counts: zero, rollouts: 100, created_at: 0, finished_at: null, done: false },
        5_000,
      ),
    ).toMatchObject({ per_second: null, eta_ms: null });
    expect(
      batchThroughput(
        { counts, rollouts: 30, created_at: 0, finished_at: 6_000, done: true },
        99_000,
      ),
    ).toMatchObject({ elapsed_ms: 6_000, per_second: 5, eta_ms: 0 });
  });
});
