/**
 * @module The time one engine step takes, from what the step computes: a documented curve, not a
 * per-request latency. A decode step of a GPU serving a dense model is memory-bound at small
 * batches (it reads every weight once whatever the batch), so its time barely grows with the
 * sequences in it and throughput grows almost linearly with the batch; each sequence adds its
 * own sampling and KV reads, and prefill tokens are compute-bound, so large batches saturate.
 * That is the shape vLLM's own benchmarks and the Sarathi-Serve and vLLM papers report
 * (docs/vllm.md, "The engine"); the defaults put a Llama-3-8B-class model on one H100.
 */
import type { LatencyOptions } from "../options";
import type { StepCostOptions } from "./engine-options";
export { DEFAULT_STEP_COST } from "./default-step-cost";

/** What one step computed, as the cost model reads it. */
export interface StepShape {
  /** Prompt (or recomputed) tokens prefilled in this step, all chunks together. */
  prefillTokens: number;
  /** Sequences that decoded one token in this step. */
  decodeSequences: number;
  /** Tokens of context (KV entries) the step's decodes attended over, summed over sequences. */
  contextTokens: number;
}

/** A step's modelled duration in ms. */
export type StepCost = (shape: StepShape) => number;

/** The cost model's parameters, in one line a bench prints beside its figures. */
export function describeStepCost(cost: Required<StepCostOptions>): string {
  return (
    `step ms = ${cost.fixedMs} + ${cost.perSequenceMs} x decoding sequences + ` +
    `${cost.perPrefillTokenMs} x prefill tokens + ${cost.perKContextTokensMs} x context tokens / 1000`
  );
}

/** The cost model of `cost`. */
export function curveCost(cost: Required<StepCostOptions>): StepCost {
  return (shape) =>
    shape.decodeSequences + shape.prefillTokens === 0
      ? 0
      : cost.fixedMs +
        cost.perSequenceMs * shape.decodeSequences +
        cost.perPrefillTokenMs * shape.prefillTokens +
        (cost.perKContextTokensMs * shape.contextTokens) / 1000;
}

/**
 * The cost model of the older per-request latency options, for a simulator configured without a
 * curve (the default): a decode step takes `perTokenMs`, slowed by `decodeSlowdown` for every other
 * decoding sequence, and prefill tokens cost `prefillMsPer1kTokens` per 1,000. With every term 0
 * (the defaults) steps take no time and the simulator answers as fast as it can compute.
 */
export function latencyCost(
  latency: Pick<LatencyOptions, "perTokenMs">,
  prefill: { prefillMsPer1kTokens: number; decodeSlowdown: number },
): StepCost {
  return (shape) => {
    const decode =
      shape.decodeSequences === 0
        ? 0
        : latency.perTokenMs * (1 + prefill.decodeSlowdown * (shape.decodeSequences - 1));
    return decode + (shape.prefillTokens * prefill.prefillMsPer1kTokens) / 1000;
  };
}
