/** Unit: what a rollout's calls generated per policy version, and how many a sync cut or resumed. */
import { describe, expect, it } from "vitest";
import { generationCounts } from "../../../src/sink/publication/generation-counts";
import { MAX_GENERATION_VERSIONS } from "../../../src/schemas/generation-stats";
import type { LlmCall } from "../../../src/schemas/llm-call";

function call(tokens: number, extra: Partial<LlmCall> = {}): LlmCall {
  return {
    completion_token_ids: Array.from({ length: tokens }, (_, i) => i),
    policy_version_start: 2,
    purpose: "policy",
    ...extra,
  } as LlmCall;
}

describe("generationCounts", () => {
  it("splits a resumed call's tokens at its runs, and counts cut, resumed and restarted calls apart", () => {
    const counts = generationCounts([
      call(12),
      // Cut at token 5 under version 2, resumed under version 3.
      call(20, {
        policy_version_runs: [
          { from_token: 0, policy_version: 2 },
          { from_token: 5, policy_version: 3 },
        ],
        interruption: { interruptible: true, reason: null, interrupted: 1 },
      }),
      // Cut before its first token: restarted wholly under version 3, nothing resumed.
      call(7, {
        policy_version_runs: [{ from_token: 0, policy_version: 3 }],
        interruption: { interruptible: true, reason: null, interrupted: 1 },
      }),
      // A grader's call is not the trained policy's generation.
      call(50, { purpose: "judge" }),
    ]);
    expect(counts).toEqual({
      calls_interrupted: 2,
      calls_resumed: 1,
      tokens_by_policy_version: { "2": 17, "3": 22 },
    });
  });

  it("stays bounded: versions past the limit fold into the oldest kept", () => {
    const calls = Array.from({ length: MAX_GENERATION_VERSIONS + 3 }, (_, v) =>
      call(1, { policy_version_start: v }),
    );
    const counts = generationCounts(calls);
    expect(Object.keys(counts.tokens_by_policy_version)).toHaveLength(MAX_GENERATION_VERSIONS);
    expect(counts.tokens_by_policy_version["3"]).toBe(4);
    expect(Object.values(counts.tokens_by_policy_version).reduce((a, b) => a + b, 0)).toBe(
      MAX_GENERATION_VERSIONS + 3,
    );
  });
});
