/**
 * @module A training sample's response mask split for display (the dashboard's token strip, the command
 * line): runs of trained (1) and context (0) tokens, and their totals. It decides nothing; which
 * tokens are trained is `sample-builder.ts`.
 */
import type { TrainingSample } from "../schemas/training-sample";

/** A maximal run of equal mask values in `response_mask`: tokens `[start, start + length)`. */
export interface MaskRun {
  mask: 0 | 1;
  start: number;
  length: number;
}

/** Splits a response mask into runs of equal values. */
export function maskRuns(mask: ReadonlyArray<0 | 1>): MaskRun[] {
  const runs: MaskRun[] = [];
  mask.forEach((value, index) => {
    const last = runs.at(-1);
    if (last && last.mask === value) last.length += 1;
    else runs.push({ mask: value, start: index, length: 1 });
  });
  return runs;
}

/** Token counts of a sample: prompt (never trained), trained (mask 1) and context (mask 0) response tokens. */
export function maskTotals(sample: Pick<TrainingSample, "prompt_ids" | "response_mask">): {
  prompt: number;
  trained: number;
  context: number;
} {
  const trained = sample.response_mask.reduce<number>((sum, value) => sum + value, 0);
  return {
    prompt: sample.prompt_ids.length,
    trained,
    context: sample.response_mask.length - trained,
  };
}
