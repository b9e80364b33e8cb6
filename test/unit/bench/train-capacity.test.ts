/** Unit: bench:train's equal-hardware model (capacity.ts) and its ratios (train-report.ts). */
import { describe, expect, it } from "vitest";
import {
  type Capacity,
  checkCapacity,
  replicaEngine,
  split,
  trainMsPerToken,
  trainWallMs,
} from "../../../bench/train/capacity";
import { headlineLines, type Measured } from "../../../bench/train/train-report";
import { curveCost } from "../../../tools/simulator/engine/cost-model";

const capacity: Capacity = { gpus: 4, rolloutGpus: 2, seqsPerStream: 16, mfu: 0.4, timeScale: 1 };

describe("bench:train capacity", () => {
  it("gives hybrid every unit for both phases and splits them in the other schedules", () => {
    expect(split(capacity, "hybrid")).toEqual({ generate: 4, train: 4 });
    expect(split(capacity, "async")).toEqual({ generate: 2, train: 2 });
    expect(split(capacity, "one_step_off")).toEqual({ generate: 2, train: 2 });
  });

  it("trains in time proportional to tokens over the training units", () => {
    // 8 × 8e9 FLOP at 40% of 989 TFLOP/s is 0.1618 ms a token; a simulated token stands for 16.
    expect(trainMsPerToken(capacity)).toBeCloseTo(16 * 0.16178, 3);
    expect(trainWallMs(capacity, 1000, 2)).toBeCloseTo(2 * trainWallMs(capacity, 1000, 4), 9);
    expect(trainWallMs({ ...capacity, timeScale: 0.5 }, 1000, 2)).toBeCloseTo(
      trainWallMs(capacity, 1000, 2) / 2,
      9,
    );
  });

  it("times a pooled step of b sequences as one unit's step of b / units", () => {
    const curve = (units: number) => {
      const model = replicaEngine(capacity, units).engine.costModel;
      if (!model || model === "default") throw new Error("a curve is expected");
      return curveCost(model as Parameters<typeof curveCost>[0]);
    };
    const shape = (b: number) => ({ prefillTokens: 0, decodeSequences: b, contextTokens: b * 300 });
    expect(curve(4)(shape(32))).toBeCloseTo(curve(1)(shape(8)), 9);
    expect(replicaEngine(capacity, 4).engine.maxNumSeqs).toBe(
      4 * replicaEngine(capacity, 1).engine.maxNumSeqs!,
    );
  });

  it("refuses a split that leaves no unit to train or to generate", () => {
    expect(() => checkCapacity({ ...capacity, rolloutGpus: 4 })).toThrow(/--rollout-gpus/);
    expect(() => checkCapacity({ ...capacity, rolloutGpus: 0 })).toThrow(/--rollout-gpus/);
    expect(() => checkCapacity({ ...capacity, mfu: 0 })).toThrow(/--mfu/);
  });
});

describe("bench:train headline", () => {
  const run = (name: string, repeat: number, tokens: number): Measured => ({
    name,
    repeat,
    wallMs: 10_000,
    trainedTokens: tokens,
    trainedSamples: 10,
    trainerBusy: 1,
    syncWaitsMs: [],
    stalenessMax: 0,
    discardedTokens: 0,
    lengths: new Map(),
    generationBusy: 1,
    workerCores: 0,
    simulatorCores: 0,
  });

  it("takes each ratio within its repeat, then the median and spread of those", () => {
    // Repeat 2 is slow for both modes: its ratio is still 1.5, where cross-repeat medians would mix.
    const results = [
      run("hybrid", 1, 1000),
      run("async", 1, 2000),
      run("hybrid", 2, 500),
      run("async", 2, 750),
      run("hybrid", 3, 1000),
      run("async", 3, 1200),
    ];
    const [line] = headlineLines(results, "hybrid", ["hybrid", "async"]);
    expect(line).toMatch(
      /^trained tokens\/s: hybrid 100\.0, async 120\.0, ratio 1\.50 \(spread 1\.20–2\.00 over 3 repeats\)/,
    );
  });
});
