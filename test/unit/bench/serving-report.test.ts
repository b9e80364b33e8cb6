import { describe, expect, it } from "vitest";
import type { PathCalls, ServingPlan } from "../../../bench/gateway/serving-arm";
import {
  deltasPerRepeat,
  formatServingLines,
  medianRange,
} from "../../../bench/gateway/serving-report";

/** One path's calls: `first` for turn 1, `later` for turns 2.. */
function calls(first: number[], later: number[], extra: Partial<PathCalls> = {}): PathCalls {
  return {
    firstMs: first,
    laterMs: later,
    tokens: [...first, ...later].map(() => 16),
    wallMs: 1000,
    recorded: 0,
    policyRequests: 0,
    shardRequests: 0,
    ...extra,
  };
}

describe("bench:gateway's serving report", () => {
  it("takes the median and the range, averaging the middle two of an even count", () => {
    expect(medianRange([3, 1, 2])).toEqual({ median: 2, low: 1, high: 3 });
    expect(medianRange([4, 1, 2, 3])).toEqual({ median: 2.5, low: 1, high: 4 });
  });

  it("compares turns 2.. within each repeat, leaving the session-opening first calls out", () => {
    const repeats = [
      { gateway: calls([100], [10, 20, 30]), serving: calls([500], [11, 22, 33]) },
      { gateway: calls([100], [10, 10, 10]), serving: calls([500], [9, 9, 9]) },
    ];
    expect(deltasPerRepeat(repeats, 50)).toEqual([2, -1]);
    expect(deltasPerRepeat(repeats, 99)).toEqual([3, -1]);
  });

  it("prints the headline with its spread and the objects each path reached", () => {
    const plan: ServingPlan = {
      workerUrl: "",
      apiKey: "",
      turns: 4,
      maxTokens: 16,
      repeats: 3,
      pairs: 1,
      rounds: 1,
      concurrency: 2,
      runTag: "t",
    };
    const lines = formatServingLines(plan, {
      sequential: [
        { gateway: calls([40], [30, 30, 30]), serving: calls([60], [31, 31, 31]) },
        { gateway: calls([40], [30, 30, 30]), serving: calls([60], [32, 32, 32]) },
        { gateway: calls([40], [30, 30, 30]), serving: calls([60], [29, 29, 29]) },
      ],
      concurrent: [
        {
          gateway: calls([50, 50], [40, 40], { shardRequests: 8, recorded: 4 }),
          serving: calls([70, 70], [41, 41]),
        },
      ],
      sameTokens: { equal: 9, compared: 12 },
    });
    expect(lines[1]).toMatch(
      /^serving vs rollout gateway: p50 \+1\.0 ms \(-1\.0 – \+2\.0\), p99 \+1\.0 ms/,
    );
    expect(lines.join("\n")).toContain(
      "serving: policy object 0, admission shards 0 requests over 4 calls; gateway: policy object 0, shards 8 (2.000 per call) over 4 calls",
    );
  });
});
