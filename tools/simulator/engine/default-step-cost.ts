/** @module The default step cost curve's numbers (cost-model.ts reads them; options.ts fills them in). */

/**
 * The default curve: fixed 6 ms a step (reading 16 GB of bf16 weights at ~3.3 TB/s, plus launch
 * overhead), 0.05 ms per sampling sequence, 0.06 ms per prefill token (~16k prefill tokens/s),
 * 0.04 ms per 1,000 tokens of context attended (128 KB of KV per token for an 8B model with GQA).
 * One sequence then decodes ~160 tokens/s, 128 sequences of 1k context ~7,300 tokens/s together.
 */
export const DEFAULT_STEP_COST: {
  readonly fixedMs: number;
  readonly perSequenceMs: number;
  readonly perPrefillTokenMs: number;
  readonly perKContextTokensMs: number;
} = {
  fixedMs: 6,
  perSequenceMs: 0.05,
  perPrefillTokenMs: 0.06,
  perKContextTokensMs: 0.04,
};
