/** @module Batches: verl dataset rows, the batch request and queue message, and batch progress. */
import { z } from "zod";
import { JsonObject, JsonValue } from "./json";
import { ChatMessage } from "./chat";
import { RolloutConfig } from "./rollout-config";
import { InfraFailurePolicy, MAX_MEMBER_RETRIES, SignalFilter } from "./member-outcome";
import { DataManagerName, TrainingModeName } from "./rollout-group";
import { TerminationReason } from "./termination";
import { BatchTree, MAX_TREE_ROLLOUTS_PER_ROW, treeNodes } from "./batch-tree";

/** Version of the BatchMessage shape; bump with a fixture when it changes. */
export const BATCH_MESSAGE_SCHEMA_VERSION = 1;
/** Most samples (rollouts) per dataset row: the GRPO group size. */
export const MAX_SAMPLES_PER_ROW = 64;
/** Most rows one batch holds (after `limit`); larger datasets are split into several batches. */
export const MAX_BATCH_ROWS = 10_000;
/** Re-runs of an infrastructure failure's slot unless a batch says otherwise. */
export const DEFAULT_MEMBER_RETRIES = 2;
/** Rollouts a batch keeps in flight at once unless `max_concurrent` says otherwise. */
export const DEFAULT_MAX_CONCURRENT = 256;
/** Upper bound of `max_concurrent`: a tracker makes one session RPC per in-flight rollout on cancel. */
export const MAX_MAX_CONCURRENT = 1000;

/**
 * Batch ids share the rollout-id charset and leave room for the `:<row>:<sample>` suffix of the
 * batch's rollout ids (at most 200 characters).
 */
export const BatchId = z
  .string()
  .regex(/^[A-Za-z0-9._:-]{1,160}$/, "batch_id must be 1-160 characters of A-Z a-z 0-9 . _ : -")
  .refine(
    (id) => id !== "." && id !== "..",
    "batch_id must not be . or .. (URL normalization would make it unreachable)",
  );

/** Parquet writers store absent struct fields as null; a chat message treats null as absent. */
function dropNullKeys(value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  return Object.fromEntries(
    Object.entries(value).filter(([key, field]) => field !== null || key === "content"),
  );
}

/** One chat message of a dataset row's prompt (OpenAI shape; null fields from parquet dropped). */
export const DatasetMessage = z.preprocess(dropNullKeys, ChatMessage);
export type DatasetMessage = z.infer<typeof DatasetMessage>;

/**
 * One row of a verl RL dataset (the shape verl's preprocessing scripts write to parquet):
 * `prompt` is the chat (a bare string is read as one user message), `reward_model.ground_truth`
 * what the grader compares against, `extra_info` free-form (`index`, `split`, `tools_kwargs`, …).
 * Unknown columns are kept (they reach the task's `extra_args`). `agent_name` overrides the
 * batch's agent for this row.
 */
export const DatasetRow = z.looseObject({
  prompt: z.union([
    z.string().min(1, "prompt must not be empty"),
    z.array(DatasetMessage).min(1, "prompt must hold at least one message"),
  ]),
  data_source: z
    .string()
    .nullish()
    .transform((value) => value ?? ""),
  ability: z
    .string()
    .nullish()
    .transform((value) => value ?? ""),
  reward_model: z.looseObject({
    style: z.string().nullish(),
    ground_truth: z
      .custom<JsonValue>(
        (value) => value !== undefined,
        "ground_truth is required (null if there is none)",
      )
      .pipe(JsonValue),
  }),
  extra_info: JsonObject.nullish().transform((value) => value ?? {}),
  agent_name: z.string().min(1).nullish(),
});
export type DatasetRow = z.infer<typeof DatasetRow>;
/** A row as a producer writes it (defaults not applied). */
export type DatasetRowInput = z.input<typeof DatasetRow>;

/** What a batch does with a group lost to the staleness rule: replace it at once, or hold new rollouts until the trainer catches up first. */
export const OnStale = z.enum(["drop", "wait"], 'on_stale must be "drop" or "wait"');
export type OnStale = z.infer<typeof OnStale>;
/** Refills a batch gets by default (groups lost to staleness replaced from its reserve rows). */
export const DEFAULT_REFILL_BUDGET = 16;
/** Largest `refill_budget`. */
export const MAX_REFILL_BUDGET = 10_000;

/** The fields a batch request and a batch message share. */
const batchFields = {
  /** Registered agent name (or `external`); a row's `agent_name` overrides it. */
  agent: z.string().min(1, "agent must name a registered agent"),
  /** Dataset rows inline; exactly one of `rows` and `dataset_key`. */
  rows: z
    .array(DatasetRow)
    .min(1, "rows must not be empty")
    .max(MAX_BATCH_ROWS, `rows must hold at most ${MAX_BATCH_ROWS} rows`)
    .optional(),
  /** Key of a `.jsonl` or `.parquet` object in the TRAJECTORIES bucket. */
  dataset_key: z
    .string()
    .min(1)
    .max(1024)
    .regex(/\.(jsonl|parquet)$/, "dataset_key must name a .jsonl or .parquet object")
    .optional(),
  /** Samples per row (GRPO group size), 1..64. */
  n: z
    .int("n must be an integer")
    .min(1, "n must be >= 1")
    .max(MAX_SAMPLES_PER_ROW, `n must be <= ${MAX_SAMPLES_PER_ROW}`),
  /** `train` feeds the trainer (data_manager `train`), `val` only stores (data_manager `infer`); sets `config.mode`. Default train. */
  mode: z.enum(["train", "val"]).default("train"),
  /** Rollout config for every rollout of the batch (its `mode` is set from `mode`). */
  config: RolloutConfig.optional(),
  /** Rollouts in flight at once, 1..1000. Default 256. */
  max_concurrent: z
    .int("max_concurrent must be an integer")
    .min(1, "max_concurrent must be >= 1")
    .max(MAX_MAX_CONCURRENT, `max_concurrent must be <= ${MAX_MAX_CONCURRENT}`)
    .default(DEFAULT_MAX_CONCURRENT),
  /** Training mode recorded in each rollout's group. Default `verl/hybrid`. */
  training_mode: TrainingModeName.default("verl/hybrid"),
  /** Default `train` for mode train, `infer` for val. */
  data_manager: DataManagerName.optional(),
  /**
   * The training run (and kind) the batch belongs to, for the run view (`/runs/:series`); default
   * the batch id without its trailing number. The verl manager sets `<run_id>-<kind>`.
   */
  series: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,160}$/, "series must be 1-160 characters of A-Z a-z 0-9 . _ : -")
    .optional(),
  /** Use only the first `limit` rows. */
  limit: z.int("limit must be an integer").min(1, "limit must be >= 1").optional(),
  /** Re-runs of a slot whose rollout failed for infrastructure (never scored), 0..5. Default 2. */
  max_member_retries: z
    .int("max_member_retries must be an integer")
    .min(0, "max_member_retries must be >= 0")
    .max(MAX_MEMBER_RETRIES, `max_member_retries must be <= ${MAX_MEMBER_RETRIES}`)
    .default(DEFAULT_MEMBER_RETRIES),
  /**
   * Over-sampling: the batch is done once this many groups with signal are complete (rows beyond
   * it are a reserve); what still runs then is cancelled (cut, never trained). Default: every row.
   */
  target_groups: z
    .int("target_groups must be an integer")
    .min(1, "target_groups must be >= 1")
    .optional(),
  /** Dynamic sampling (DAPO): complete groups without spread on `metric` are filtered (`no_signal`). */
  filter: SignalFilter.optional(),
  /** A complete group still holding an infrastructure failure: `withhold` (default) or `deliver_valid`. */
  on_infra_failure: InfraFailurePolicy.default("withhold"),
  /** Tree sampling: each of a row's n roots branched at `branch_at` steps into `width` children per node (batch-tree.ts). */
  tree: BatchTree.optional(),
  /**
   * A group lost to the staleness rule (cancelled while it ran, or dropped when pulled): `drop`
   * (default) replaces it at once from the reserve rows; `wait` first holds the batch's new
   * rollouts until the trainer has pulled its ready groups (docs/decisions/0016-stale-groups-drop-wait-refill.md).
   */
  on_stale: OnStale.default("drop"),
  /** Groups lost to staleness the batch replaces from its reserve rows (over `target_groups`), 0..10,000. Default 16. */
  refill_budget: z
    .int("refill_budget must be an integer")
    .min(0, "refill_budget must be >= 0")
    .max(MAX_REFILL_BUDGET, `refill_budget must be <= ${MAX_REFILL_BUDGET}`)
    .default(DEFAULT_REFILL_BUDGET),
};

/** Exactly one of `rows` and `dataset_key`; a `target_groups` inline rows can give; a tree of bounded size, without `target_groups`. */
function oneSource(
  value: {
    rows?: unknown[];
    dataset_key?: unknown;
    limit?: number;
    target_groups?: number;
    n: number;
    tree?: BatchTree;
  },
  ctx: z.RefinementCtx,
): void {
  if ((value.rows === undefined) === (value.dataset_key === undefined)) {
    const message = "exactly one of rows and dataset_key is required";
    ctx.addIssue({
      code: "custom",
      path: [value.rows === undefined ? "rows" : "dataset_key"],
      message,
    });
  }
  const rows =
    value.rows === undefined ? undefined : Math.min(value.rows.length, value.limit ?? Infinity);
  if (rows !== undefined && value.target_groups !== undefined && value.target_groups > rows) {
    ctx.addIssue({
      code: "custom",
      path: ["target_groups"],
      message: `target_groups (${value.target_groups}) must be <= the batch's rows (${rows})`,
    });
  }
  if (!value.tree) return;
  // A cut stops releasing by slot index; a tree's children are released by their parents' ends.
  if (value.target_groups !== undefined)
    ctx.addIssue({
      code: "custom",
      path: ["target_groups"],
      message: "target_groups cannot be combined with tree",
    });
  const perRow = value.n * treeNodes(value.tree);
  if (perRow > MAX_TREE_ROLLOUTS_PER_ROW)
    ctx.addIssue({
      code: "custom",
      path: ["tree"],
      message: `n × the tree's nodes is ${perRow} rollouts per row; at most ${MAX_TREE_ROLLOUTS_PER_ROW}`,
    });
}

/** `POST /v1/batches` body: without `batch_id`, one is generated. */
export const CreateBatchRequest = z
  .object({ ...batchFields, batch_id: BatchId.optional() })
  .strict()
  .superRefine(oneSource);
export type CreateBatchRequest = z.infer<typeof CreateBatchRequest>;

/**
 * The message on queue `edge-rollout-batches`: a batch request with its `batch_id`. Producers may
 * send it directly (max 128 KB: large datasets go by `dataset_key`). Starting a batch is idempotent
 * by `batch_id`, so redelivery is harmless.
 */
export const BatchMessage = z
  .object({
    ...batchFields,
    schema_version: z.literal(BATCH_MESSAGE_SCHEMA_VERSION).default(BATCH_MESSAGE_SCHEMA_VERSION),
    batch_id: BatchId,
  })
  .strict()
  .superRefine(oneSource);
export type BatchMessage = z.infer<typeof BatchMessage>;
/** A message as a producer writes it (defaults not applied). */
export type BatchMessageInput = z.input<typeof BatchMessage>;

/**
 * How many rollouts of a batch are in each state; `not_released` ones were not created yet.
 * `queued` vs `running` is as of the tracker's last look at the session (its create, or the alarm).
 */
export const BatchCounts = z.object({
  not_released: z.int(),
  queued: z.int(),
  running: z.int(),
  succeeded: z.int(),
  failed: z.int(),
  cancelled: z.int(),
});
export type BatchCounts = z.infer<typeof BatchCounts>;

/** `running` until every rollout is terminal (`completed`); `cancelling` until the cancelled ones end. */
export const BatchStatus = z.enum(["running", "cancelling", "cancelled", "completed"]);
export type BatchStatus = z.infer<typeof BatchStatus>;

/**
 * A batch's groups lost to the staleness rule and their replacement (src/runtime/batch/stale-refill.ts):
 * `cancelled` (a member ended STALE while it ran), `stale` (dropped by the feed when pulled),
 * `refilled` (replaced from the reserve rows, within `budget`), `unreplaced` (past the budget or
 * without `target_groups`: the batch ends that many short), and since when an `on_stale: "wait"`
 * batch holds its new rollouts (null: it does not).
 */
export const BatchRefill = z.object({
  stale: z.int(),
  cancelled: z.int(),
  refilled: z.int(),
  unreplaced: z.int(),
  budget: z.int(),
  holding_since: z.number().nullable(),
});
export type BatchRefill = z.infer<typeof BatchRefill>;

/** `GET /v1/batches/:id`: progress of one batch. `counts` add up to `rollouts`. */
export const BatchProgress = z.object({
  batch_id: z.string(),
  agent: z.string(),
  mode: z.enum(["train", "val"]),
  training_mode: z.string(),
  data_manager: z.string(),
  /** The R2 key the rows came from, or null for inline rows. */
  dataset_key: z.string().nullable(),
  status: BatchStatus,
  done: z.boolean(),
  rows: z.int(),
  n: z.int(),
  /** rows × n, times the nodes of one tree with `tree` (slots whose parent ended before the branch step count as cancelled). */
  rollouts: z.int(),
  /** Rollouts created so far (the rest are `not_released`, or cancelled without ever being created). */
  released: z.int(),
  /** Released and not yet terminal; never above `max_concurrent`. */
  in_flight: z.int(),
  max_concurrent: z.int(),
  counts: BatchCounts,
  /** Finished rollouts by termination reason (rollouts cancelled before release are not counted). */
  termination_reasons: z.partialRecord(TerminationReason, z.int()),
  /** Mean reward over finished rollouts with a reward; null when there are none. */
  reward: z.object({ mean: z.number().nullable(), count: z.int() }),
  /**
   * Rollouts that failed for infrastructure and whose slot was re-run (not in `counts`, which
   * count each slot's current run): never scored, never trained.
   */
  retried: z.int().default(0),
  /**
   * The batch's GRPO groups once complete: `delivered` with signal (to the trainer),
   * `filtered` (no signal), `withheld` (an infrastructure failure after retries), `cut` (a
   * cancelled member); `target` is `target_groups` (null: every row); `cut_at` is when the
   * target was met and the surplus cancelled.
   */
  groups: z
    .object({
      target: z.int().nullable(),
      complete: z.int(),
      delivered: z.int(),
      filtered: z.int(),
      withheld: z.int(),
      cut: z.int(),
      cut_at: z.number().nullable(),
    })
    .default({
      target: null,
      complete: 0,
      delivered: 0,
      filtered: 0,
      withheld: 0,
      cut: 0,
      cut_at: null,
    }),
  /** Groups lost to staleness and their refills. */
  refill: BatchRefill.default({
    stale: 0,
    cancelled: 0,
    refilled: 0,
    unreplaced: 0,
    budget: DEFAULT_REFILL_BUDGET,
    holding_since: null,
  }),
  created_at: z.number(),
  updated_at: z.number(),
  finished_at: z.number().nullable(),
});
export type BatchProgress = z.infer<typeof BatchProgress>;

/** One rollout of a batch as `GET /v1/batches/:id/rollouts` lists it (see batch-listing.ts). */
export { RolloutListEntry as BatchRolloutEntry } from "./batch-listing";
