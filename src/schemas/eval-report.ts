/** @module An evaluation run's report: pass@1 / pass@k, mean reward, per data source, failures. */
import { z } from "zod";

/** Scores over a set of rows (the whole batch, or one data source). */
export const EvalScores = z.object({
  /** Rows with at least k finished samples (the rows pass@k is averaged over). */
  rows: z.int(),
  /** Finished samples over all rows. */
  samples: z.int(),
  pass_at_1: z.number().nullable(),
  pass_at_k: z.number().nullable(),
  /** Mean reward over finished samples with a reward. */
  mean_reward: z.number().nullable(),
});
export type EvalScores = z.infer<typeof EvalScores>;

/** `GET /v1/batches/:id/eval`: the report `edge-rollout eval` prints and the dashboard shows. */
export const EvalReport = z.object({
  batch_id: z.string(),
  agent: z.string(),
  mode: z.enum(["train", "val"]),
  /** Samples per row the batch asked for. */
  n: z.int(),
  k: z.int(),
  /** A sample passes when its reward is at least this. */
  pass_threshold: z.number(),
  done: z.boolean(),
  total: EvalScores,
  by_data_source: z.array(EvalScores.extend({ data_source: z.string() })),
  /** Finished samples that did not pass, by termination reason. */
  failures: z.record(z.string(), z.int()),
});
export type EvalReport = z.infer<typeof EvalReport>;

/** `GET /v1/batches/:id/eval` query: k defaults to the batch's n, the threshold to 1. */
export const EvalQuery = z.object({
  k: z.coerce.number().int().min(1, "k must be >= 1").max(64, "k must be <= 64").optional(),
  threshold: z.coerce
    .number()
    .refine(Number.isFinite, "threshold must be a finite number")
    .default(1),
});
export type EvalQuery = z.infer<typeof EvalQuery>;
