/**
 * @module The engine's options (`VllmSimulatorOptions.engine`): its step cost curve, time scale,
 * scheduling limits and token source, their defaults, and how a runtime patch changes them.
 */
import { z } from "zod";
import { DEFAULT_STEP_COST } from "./default-step-cost";

/**
 * The step cost curve (engine/cost-model.ts): a step takes `fixedMs` + `perSequenceMs` per
 * sequence sampling a token + `perPrefillTokenMs` per prefill token + `perKContextTokensMs` per
 * 1,000 tokens of context the sampling sequences attend over. Each term defaults to the default
 * curve's (an 8B model on one H100, see docs/vllm.md).
 */
export const StepCostOptions = z.strictObject({
  fixedMs: z.number().min(0, "engine.costModel.fixedMs must be >= 0").optional(),
  perSequenceMs: z.number().min(0, "engine.costModel.perSequenceMs must be >= 0").optional(),
  perPrefillTokenMs: z
    .number()
    .min(0, "engine.costModel.perPrefillTokenMs must be >= 0")
    .optional(),
  perKContextTokensMs: z
    .number()
    .min(0, "engine.costModel.perKContextTokensMs must be >= 0")
    .optional(),
});
export type StepCostOptions = z.infer<typeof StepCostOptions>;

/**
 * The engine's step loop (engine/engine-loop.ts): how a step is timed and how much it schedules.
 * Without `costModel` a step takes the time the `latency` and `prefixCache` timing terms give (0
 * by default); with it, the curve's. The KV cache is `prefixCache`'s blocks.
 */
export const EngineOptions = z.strictObject({
  /** The step cost curve, `"default"` for the default one; null: the latency options time steps. Default null. */
  costModel: z
    .union([z.literal("default"), StepCostOptions])
    .nullable()
    .optional(),
  /** Wall time per modelled ms (0.1 runs ten times faster than modelled). Default 1. */
  timeScale: z.number().min(0, "engine.timeScale must be >= 0").optional(),
  /** Most sequences running at once (`--max-num-seqs`). Default 256. */
  maxNumSeqs: z.int().min(1, "engine.maxNumSeqs must be >= 1").optional(),
  /** Most tokens one step computes (`--max-num-batched-tokens`). Default 8192. */
  maxNumBatchedTokens: z.int().min(1, "engine.maxNumBatchedTokens must be >= 1").optional(),
  /** Split a prefill across steps to fit the token budget (`--enable-chunked-prefill`). Default true. */
  chunkedPrefill: z.boolean().optional(),
  /**
   * An external engine process that answers each step's tokens (engine/external-token-source.ts,
   * docs/vllm.md "Token sources"), e.g. `http://127.0.0.1:8100`; null: the scripted model. Default null.
   */
  tokenSourceUrl: z.url({ error: "engine.tokenSourceUrl must be a URL" }).nullable().optional(),
});
export type EngineOptions = z.infer<typeof EngineOptions>;

/** `EngineOptions` with defaults filled in (the cost model resolved to its numbers, or null). */
export interface EngineConfig {
  costModel: Required<StepCostOptions> | null;
  timeScale: number;
  maxNumSeqs: number;
  maxNumBatchedTokens: number;
  chunkedPrefill: boolean;
  tokenSourceUrl: string | null;
}

/** The engine config with `patch` merged field by field; "default" names the default curve. */
export function patchEngine(engine: EngineConfig, patch: EngineOptions | undefined): EngineConfig {
  if (!patch) return engine;
  const { costModel, ...rest } = patch;
  return {
    ...engine,
    ...stripUndefined(rest),
    costModel:
      costModel === undefined
        ? engine.costModel
        : costModel === null
          ? null
          : { ...DEFAULT_STEP_COST, ...(costModel === "default" ? {} : stripUndefined(costModel)) },
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
