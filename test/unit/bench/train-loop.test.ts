/** Unit: bench:train's trainer schedules (train-loop.ts) against a scripted stack. */
import { describe, expect, it } from "vitest";
import { type ModeSpec, runMode, type TrainerStack } from "../../../bench/train/train-loop";

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    signal?.addEventListener("abort", () => (clearTimeout(timer), resolve(true)), { once: true });
  });

/** Group g has two members of `tokens(g)` tokens each and takes `ms(g)`; an abort keeps 7 tokens a member. */
function scripted(ms: (g: number) => number, tokens: (g: number) => number): TrainerStack {
  return {
    async group(index, signal) {
      const aborted = await sleep(ms(index), signal);
      return aborted
        ? { tokens: [7, 7], aborted: true }
        : { tokens: [tokens(index), tokens(index)], aborted: false };
    },
    sync: async () => 0,
  };
}

const spec = (schedule: ModeSpec["schedule"], maxStaleness = 0): ModeSpec => ({
  name: schedule,
  schedule,
  syncMode: "drain",
  maxStaleness,
});
const options = { batch: 2, warmUpSteps: 1, steps: 2, trainMs: () => 5, version0: 0 };

describe("bench:train schedules", () => {
  it("trains the same groups, and all their tokens, in hybrid and one_step_off", async () => {
    const stack = scripted(
      () => 3,
      (g) => 10 + g,
    );
    // Timed steps train groups 2..5 (the warm-up step trained 0 and 1): 2 × (12 + 13 + 14 + 15).
    for (const schedule of ["hybrid", "one_step_off"] as const) {
      const result = await runMode(stack, spec(schedule), options);
      expect(result.trainedTokens).toBe(108);
      expect(result.trainedSamples).toBe(8);
      expect(result.discardedTokens).toBe(0);
    }
  });

  it("hangs up on a group more than k versions stale and counts its tokens as discarded", async () => {
    // Group 0 would take 10 s: at k = 1 it is doomed once the trainer is two versions past it.
    const stack = scripted(
      (g) => (g === 0 ? 10_000 : 3),
      () => 20,
    );
    const result = await runMode(stack, spec("async", 1), { ...options, warmUpSteps: 0, steps: 3 });
    expect(result.lengths.has(0)).toBe(false);
    // Its 7 + 7 tokens, plus any whole group that finished but was not trained within k.
    expect(result.discardedTokens % 40).toBe(14);
    expect(result.stalenessMax).toBeLessThanOrEqual(1);
    expect(result.trainedTokens).toBe(3 * 2 * 40);
  });
});
