/** @module Listing a batch's rollouts with filters, its reward summary, and the catalog of batches. */
import { z } from "zod";
import { MemberOutcome } from "./member-outcome";
import { TerminationReason } from "./termination";

/** A slot's status in a listing: a rollout's status, or `not_released` for one not created yet. */
export const SlotStatus = z.enum([
  "not_released",
  "queued",
  "running",
  "succeeded",
  "failed",
  "cancelled",
]);
export type SlotStatus = z.infer<typeof SlotStatus>;

/** Most entries one listing page returns. */
export const MAX_LIST_LIMIT = 1000;

/** A query-string boolean: `true`/`1` or `false`/`0`. */
const QueryFlag = z.union([
  z.boolean(),
  z.enum(["true", "false", "1", "0"]).transform((value) => value === "true" || value === "1"),
]);

/** A finite reward bound from a query string (empty means none). */
const RewardBound = z.preprocess(
  (value) => (value === "" ? undefined : value),
  z.coerce.number().refine(Number.isFinite, "must be a finite number").optional(),
);

/**
 * `GET /v1/batches/:id/rollouts` query (and the same RPC argument): a page of slots in (row, sample)
 * order, filtered. Without `include_unreleased` only released rollouts are listed.
 */
export const RolloutListQuery = z.object({
  offset: z.coerce.number().int().min(0, "offset must be >= 0").default(0),
  limit: z.coerce
    .number()
    .int()
    .min(1, "limit must be >= 1")
    .max(MAX_LIST_LIMIT, `limit must be <= ${MAX_LIST_LIMIT}`)
    .default(100),
  status: z.preprocess((value) => (value === "" ? undefined : value), SlotStatus.optional()),
  reason: z.preprocess((value) => (value === "" ? undefined : value), TerminationReason.optional()),
  agent: z.preprocess(
    (value) => (value === "" ? undefined : value),
    z.string().max(200).optional(),
  ),
  data_source: z.preprocess(
    (value) => (value === "" ? undefined : value),
    z.string().max(200).optional(),
  ),
  reward_min: RewardBound,
  reward_max: RewardBound,
  include_unreleased: QueryFlag.default(false),
});
export type RolloutListQuery = z.infer<typeof RolloutListQuery>;
/** A query as a caller writes it. */
export type RolloutListQueryInput = z.input<typeof RolloutListQuery>;

/** One slot of a batch in a listing. */
export const RolloutListEntry = z.object({
  rollout_id: z.string(),
  row_index: z.int(),
  sample_index: z.int(),
  /** The GRPO group uid: `<batch_id>:<row_index>`. */
  uid: z.string(),
  agent: z.string(),
  data_source: z.string(),
  status: SlotStatus,
  termination_reason: TerminationReason.nullable(),
  reward: z.number().nullable(),
  /** Which run of its slot (0 first; k after k infrastructure failures). */
  attempt: z.int().min(0).default(0),
  /** An infrastructure failure whose slot was re-run: listed, never trained. */
  superseded: z.boolean().default(false),
  /** `policy`, `infra` or `cut` once finished (see member-outcome.ts); null while live or not released. */
  outcome: MemberOutcome.nullable().default(null),
});
export type RolloutListEntry = z.infer<typeof RolloutListEntry>;

/** One page of a listing: `total` counts every slot matching the filters. */
export const RolloutListPage = z.object({
  total: z.int().min(0),
  offset: z.int().min(0),
  limit: z.int().min(1),
  rollouts: z.array(RolloutListEntry),
});
export type RolloutListPage = z.infer<typeof RolloutListPage>;

/** Rewards of finished rollouts in equal-width bins between the smallest and largest reward. */
export const RewardHistogram = z.object({
  min: z.number().nullable(),
  max: z.number().nullable(),
  bins: z.array(z.object({ from: z.number(), to: z.number(), count: z.int() })),
});
export type RewardHistogram = z.infer<typeof RewardHistogram>;

/** Reward over one group of finished rollouts (a data source, an agent). */
export const RewardGroup = z.object({
  key: z.string(),
  finished: z.int(),
  rewarded: z.int(),
  mean: z.number().nullable(),
});
export type RewardGroup = z.infer<typeof RewardGroup>;

/** `GET /v1/batches/:id/summary`: the reward's distribution and its mean by data source and agent. */
export const BatchSummary = z.object({
  batch_id: z.string(),
  histogram: RewardHistogram,
  by_data_source: z.array(RewardGroup),
  by_agent: z.array(RewardGroup),
});
export type BatchSummary = z.infer<typeof BatchSummary>;

/** One row (prompt) of a batch for evaluation: its finished samples and their rewards. */
export const EvalRow = z.object({
  row_index: z.int(),
  data_source: z.string(),
  /** Samples that ended (any status). */
  finished: z.int(),
  /** Samples whose reward is at least the pass threshold. */
  passed: z.int(),
  reward_sum: z.number(),
  rewarded: z.int(),
});
export type EvalRow = z.infer<typeof EvalRow>;

/** One entry of the catalog of batches (the index the dashboard and `GET /v1/batches` list from). */
export const BatchCatalogEntry = z.object({
  batch_id: z.string(),
  agent: z.string(),
  mode: z.enum(["train", "val"]),
  training_mode: z.string(),
  /** Batches of one training run: the batch's `series` as submitted, else the batch id without its trailing number (`run7-step-0012` → `run7-step-`). */
  series: z.string(),
  rollouts: z.int(),
  created_at: z.number(),
});
export type BatchCatalogEntry = z.infer<typeof BatchCatalogEntry>;

/** `GET /v1/batches` query. */
export const BatchListQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1, "limit must be >= 1")
    .max(200, "limit must be <= 200")
    .default(20),
  series: z.preprocess(
    (value) => (value === "" ? undefined : value),
    z.string().max(160).optional(),
  ),
  mode: z.preprocess(
    (value) => (value === "" ? undefined : value),
    z.enum(["train", "val"]).optional(),
  ),
  /** Only batches created before this time (ms): the next page's cursor. */
  before: z.coerce.number().optional(),
});
export type BatchListQuery = z.infer<typeof BatchListQuery>;

/** The series a batch id belongs to: the id without its trailing digits. */
export function seriesOf(batchId: string): string {
  const stripped = batchId.replace(/\d+$/, "");
  return stripped === "" ? batchId : stripped;
}
