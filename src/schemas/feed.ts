/** @module Wire shapes of the trainer feed: `/v1/feed/{pull,ack,stats,config}` and its persisted config. */
import { z } from "zod";
import { BatchId } from "./batch";
import { MemberOutcome } from "./member-outcome";
import { RolloutStatus, TerminationReason } from "./termination";
import { TrainingSample } from "./training-sample";

/** Shortest and longest lease a pull may ask for: 1 s and 1 h. */
export const MIN_LEASE_MS = 1_000;
export const MAX_LEASE_MS = 3_600_000;
/** Lease when a pull does not say: 5 minutes. */
export const DEFAULT_LEASE_MS = 300_000;
/** Most groups one pull may ask for. */
export const MAX_PULL_GROUPS = 1024;
/** Most training samples one pull may ask for. */
export const MAX_PULL_SAMPLES = 100_000;
/** Largest `max_bytes` a pull may ask for; the server's own budgets (inline-samples.ts, pack-spans.ts) may be lower. */
export const MAX_PULL_BYTES = 1024 * 1024 * 1024;
/** Most batch ids one pull or stats query may name. */
export const MAX_FILTER_BATCHES = 256;
/** Longest `batch_prefix` / `uid_prefix`. */
const MAX_PREFIX_LENGTH = 200;
/** Longest `group_timeout_ms`: 7 days. */
export const MAX_GROUP_TIMEOUT_MS = 604_800_000;

/** One batch id or a list of them (1..MAX_FILTER_BATCHES), as a list. */
export const BatchIds = z
  .union([
    BatchId,
    z
      .array(BatchId)
      .min(1, "batch_id must not be an empty list")
      .max(MAX_FILTER_BATCHES, `batch_id must name at most ${MAX_FILTER_BATCHES} batches`),
  ])
  .transform((ids) => (typeof ids === "string" ? [ids] : ids));

function Prefix(field: string) {
  return z
    .string(`${field} must be a string`)
    .min(1, `${field} must not be empty`)
    .max(MAX_PREFIX_LENGTH, `${field} must be <= ${MAX_PREFIX_LENGTH} characters`);
}

/** One batch-id prefix or a list of them, as a list. */
const BatchPrefixes = z
  .union([
    Prefix("batch_prefix"),
    z
      .array(Prefix("batch_prefix"))
      .min(1, "batch_prefix must not be an empty list")
      .max(MAX_FILTER_BATCHES, `batch_prefix must name at most ${MAX_FILTER_BATCHES} prefixes`),
  ])
  .transform((prefixes) => (typeof prefixes === "string" ? [prefixes] : prefixes));

/**
 * Which groups a consumer asks for by batch: ids in `batch_id`, or ids starting with
 * `batch_prefix`; with neither, every group (including those of no batch).
 */
export interface BatchSelector {
  batch_id?: string[];
  batch_prefix?: string[];
}

/** Whether a group of batch `batchId` (null: a rollout outside any batch) is selected. */
export function batchSelected(selector: BatchSelector, batchId: string | null): boolean {
  if (selector.batch_id === undefined && selector.batch_prefix === undefined) return true;
  if (batchId === null) return false;
  return (
    (selector.batch_id?.includes(batchId) ?? false) ||
    (selector.batch_prefix?.some((prefix) => batchId.startsWith(prefix)) ?? false)
  );
}

/**
 * `GET /v1/feed/stats` query: `batch_id` and `batch_prefix` (each repeatable) narrow `by_batch` to
 * those batches (each named id listed, with zeros when it holds nothing).
 */
export const StatsQuery = z
  .object({
    batch_id: BatchIds.optional(),
    batch_prefix: BatchPrefixes.optional(),
  })
  .strict();
export type StatsQuery = z.infer<typeof StatsQuery>;
/** A stats query as a caller passes it (one id or a list). */
export type StatsQueryInput = z.input<typeof StatsQuery>;

/**
 * `POST /v1/feed/pull`. At least one of `max_groups` / `max_samples` (training samples, summed
 * over members; whole groups only, and the first group is always delivered even if it alone is
 * larger). `max_bytes` bounds an inline pull's sample bytes below the server's own budget (a
 * trainer short of memory; the first group still always goes, the rest go back first in line).
 * `min_policy_version` skips (leaves ready, does not drop) groups older than it;
 * `training_mode` restricts the pull to one mode; `inline` returns samples instead of R2 keys.
 * `batch_id` and `batch_prefix` (each one or a list; e.g. `"<id>.chunk"` for a chunked submit)
 * restrict it to groups of those batches (a group matches either); `uid_prefix` to group uids that
 * start with it. Groups a filter leaves out stay ready for other consumers, their leases untouched.
 */
export const PullRequest = z
  .object({
    max_groups: z
      .int("max_groups must be an integer")
      .min(1, "max_groups must be >= 1")
      .max(MAX_PULL_GROUPS, `max_groups must be <= ${MAX_PULL_GROUPS}`)
      .optional(),
    max_samples: z
      .int("max_samples must be an integer")
      .min(1, "max_samples must be >= 1")
      .max(MAX_PULL_SAMPLES, `max_samples must be <= ${MAX_PULL_SAMPLES}`)
      .optional(),
    max_bytes: z
      .int("max_bytes must be an integer")
      .min(1, "max_bytes must be >= 1")
      .max(MAX_PULL_BYTES, `max_bytes must be <= ${MAX_PULL_BYTES}`)
      .optional(),
    min_policy_version: z
      .int("min_policy_version must be an integer")
      .min(0, "min_policy_version must be >= 0")
      .optional(),
    lease_ms: z
      .int("lease_ms must be an integer")
      .min(MIN_LEASE_MS, `lease_ms must be >= ${MIN_LEASE_MS}`)
      .max(MAX_LEASE_MS, `lease_ms must be <= ${MAX_LEASE_MS}`)
      .default(DEFAULT_LEASE_MS),
    inline: z.boolean("inline must be a boolean").default(false),
    training_mode: z.string().min(1, "training_mode must not be empty").optional(),
    batch_id: BatchIds.optional(),
    batch_prefix: BatchPrefixes.optional(),
    uid_prefix: Prefix("uid_prefix").optional(),
  })
  .strict()
  .refine((body) => body.max_groups !== undefined || body.max_samples !== undefined, {
    path: ["max_groups"],
    message: "max_groups or max_samples is required",
  });
export type PullRequest = z.infer<typeof PullRequest>;
/** A pull as a caller sends it (defaults not yet applied). */
export type PullRequestInput = z.input<typeof PullRequest>;

/** `POST /v1/feed/ack`: the lease whose groups the trainer has consumed. */
export const AckRequest = z
  .object({
    lease_id: z
      .string()
      .min(1, "lease_id must not be empty")
      .max(200, "lease_id must be <= 200 characters"),
  })
  .strict();
export type AckRequest = z.infer<typeof AckRequest>;

/** Version of the persisted FeedConfig shape. */
export const FEED_CONFIG_SCHEMA_VERSION = 1;

/** Time from a group's first arrival after which it is released with what arrived, `partial: true`. */
const GroupTimeoutMs = z
  .int("group_timeout_ms must be an integer")
  .min(1, "group_timeout_ms must be >= 1")
  .max(MAX_GROUP_TIMEOUT_MS, `group_timeout_ms must be <= ${MAX_GROUP_TIMEOUT_MS}`);

/** Most bytes a shard's compaction threshold may name: beyond it a pull would never see a compacted pack. */
export const MAX_PACK_COMPACTION_MIN_BYTES = 1024 * 1024 * 1024;

/** Bytes of one batch's ready groups in small packs before a shard compacts them (0: never); see pack-compaction.ts. */
const PackCompactionMinBytes = z
  .int("pack_compaction_min_bytes must be an integer")
  .min(0, "pack_compaction_min_bytes must be >= 0 (0 turns compaction off)")
  .max(
    MAX_PACK_COMPACTION_MIN_BYTES,
    `pack_compaction_min_bytes must be <= ${MAX_PACK_COMPACTION_MIN_BYTES}`,
  );

/** Default compaction threshold: 8 MiB (~400 samples of 2,048 tokens; below it a pull's reads are few anyway). */
export const DEFAULT_PACK_COMPACTION_MIN_BYTES = 8 * 1024 * 1024;

/**
 * The feed's settings. `group_timeout_ms` null: an incomplete group waits forever (the default).
 * `pack_compaction_min_bytes`: when a shard rewrites its ready groups' small packs into one.
 */
export const FeedConfig = z
  .object({
    schema_version: z.literal(FEED_CONFIG_SCHEMA_VERSION).default(FEED_CONFIG_SCHEMA_VERSION),
    group_timeout_ms: GroupTimeoutMs.nullable().default(null),
    pack_compaction_min_bytes: PackCompactionMinBytes.default(DEFAULT_PACK_COMPACTION_MIN_BYTES),
  })
  .strict();
export type FeedConfig = z.infer<typeof FeedConfig>;

/**
 * `PUT /v1/feed/config`: the fields to change (`null` turns the timeout off). Spelled out rather
 * than `.partial()`, which would fill an omitted key with its default and so reset it.
 */
export const FeedConfigUpdate = z
  .object({
    group_timeout_ms: GroupTimeoutMs.nullable().optional(),
    pack_compaction_min_bytes: PackCompactionMinBytes.optional(),
  })
  .strict();
export type FeedConfigUpdate = z.infer<typeof FeedConfigUpdate>;

/** One finished rollout in a group, as pulled: `samples` is how many training samples its R2 record at `key` holds. */
export const FeedMember = z.object({
  rollout_id: z.string(),
  sample_index: z.int().min(0),
  status: RolloutStatus,
  termination_reason: TerminationReason.nullable(),
  reward: z.number().nullable(),
  policy_version_start: z.int().min(0),
  policy_version_end: z.int().min(0),
  key: z.string(),
  samples: z.int().min(0),
  /** Whether the member may be scored (`policy`), failed for infrastructure (`infra`) or was cut; absent in members stored before. */
  outcome: MemberOutcome.optional(),
  /** Which run of its slot delivered this member (0 first; k after k re-runs for infrastructure failures). */
  member_attempt: z.int().min(0).optional(),
  /** The group's filter metric for this member (present when the group has a signal filter). */
  metric: z.number().nullable().optional(),
});
export type FeedMember = z.infer<typeof FeedMember>;

/**
 * One GRPO group as pulled. Its version is the lowest `policy_version_start` of its members;
 * `partial` groups were released by the group timeout before `group_size` members arrived.
 */
export const FeedGroup = z.object({
  uid: z.string(),
  /** The batch the group's rollouts came from; null for rollouts created one by one. */
  batch_id: z.string().nullable(),
  training_mode: z.string(),
  group_size: z.int().min(1),
  policy_version_start: z.int().min(0),
  policy_version_end: z.int().min(0),
  partial: z.boolean(),
  /** How many times this group has been leased (> 1 after an unacked lease expired). */
  deliveries: z.int().min(1),
  members: z.array(FeedMember),
  /**
   * Present when the group holds infrastructure failures and was delivered anyway
   * (`on_infra_failure: "deliver_valid"`, `partial: true`): the sample indexes whose rewards are
   * real. An estimator must compute the group's statistics over these members only.
   */
  valid_members: z.array(z.int().min(0)).optional(),
});
export type FeedGroup = z.infer<typeof FeedGroup>;

/**
 * A member with its training samples inline (`inline: true`), exactly as its R2 record holds them.
 * Samples of a member whose status is not `succeeded` are guaranteed `extra_fields.failed: true`,
 * `trainable: false` and `status` (the sample builder's flags), so the trainer can mask them;
 * `record_error` says why a record could not be read (then no samples).
 */
export const InlineFeedMember = FeedMember.extend({
  samples: z.array(TrainingSample),
  record_error: z.string().optional(),
});
export type InlineFeedMember = z.infer<typeof InlineFeedMember>;

/** A group whose members carry their samples. */
export const InlineFeedGroup = FeedGroup.extend({ members: z.array(InlineFeedMember) });
export type InlineFeedGroup = z.infer<typeof InlineFeedGroup>;

/**
 * Why the feed dropped a group instead of delivering it: `stale` (too old for its training
 * mode), `infra_failure` (a member still failed for infrastructure after its retries: the group
 * cannot give its valid members their true advantages), `no_signal` (every member scored the
 * same on the batch's filter metric: no GRPO gradient), `cut` (a member was cancelled: a batch
 * cancel, or the surplus of an over-sampled batch).
 */
/**
 * Why the feed dropped a group: `stale` when pulled (src/training/staleness.ts), `cancelled` when a
 * member was ended while it ran by the same rule (termination STALE), or its verdict's withhold
 * reason (`infra_failure`, `no_signal`, `cut`).
 */
export const DropReason = z.enum(["stale", "cancelled", "infra_failure", "no_signal", "cut"]);
export type DropReason = z.infer<typeof DropReason>;

/**
 * A group of a batch the feed dropped and will never deliver, e.g. one too stale for its training
 * mode at the version of the pull that found it (`policy_version`).
 */
export const DroppedGroup = z.object({
  uid: z.string(),
  batch_id: z.string(),
  training_mode: z.string(),
  reason: DropReason,
  group_size: z.int().min(1),
  /** Members the group held when dropped. */
  arrived: z.int().min(0),
  max_staleness: z.int().min(0),
  policy_version_start: z.int().min(0),
  policy_version_end: z.int().min(0),
  /** The policy version of the pull that dropped it (stale), or the feed's latest known one. */
  policy_version: z.int().min(0),
  dropped_at: z.number(),
  /** `infra_failure` / `cut`: the members that were not policy outcomes, and how they ended. */
  failed_members: z
    .array(
      z.object({
        rollout_id: z.string(),
        sample_index: z.int().min(0),
        termination_reason: TerminationReason.nullable(),
        outcome: MemberOutcome,
        member_attempt: z.int().min(0),
      }),
    )
    .optional(),
  /** `no_signal`: the metric and its population std over the members (at or below the filter's `min_std`). */
  metric: z.string().optional(),
  metric_std: z.number().optional(),
});
export type DroppedGroup = z.infer<typeof DroppedGroup>;

/** Most dropped groups one pull reports. */
export const MAX_REPORTED_DROPS = 1024;

/** `POST /v1/feed/pull` answer: `lease_id` null when nothing was ready. */
export interface PullResponse<G = FeedGroup> {
  lease_id: string | null;
  lease_expires_at: number | null;
  /** The policy version the staleness check used. */
  policy_version: number;
  /** Complete groups this pull found too stale and dropped (any batch). */
  dropped_stale: number;
  /**
   * Groups of the batches the pull names (`batch_id` / `batch_prefix`) that the feed has dropped,
   * whichever pull dropped them, for as long as it remembers released uids; empty when the pull
   * names no batch. A consumer waiting for a batch's groups counts these as ended, not late.
   */
  dropped_groups: DroppedGroup[];
  groups: G[];
}

/**
 * Counters and live group counts, in total and per training mode. This object is the one list of
 * the feed's counter names: `FeedCounterName`, `FEED_COUNTER_NAMES` and `zeroFeedCounts` derive from it.
 */
export const FeedCounts = z.object({
  ingested: z.int(),
  duplicates: z.int(),
  /** Rollouts for a group already released or a sample index already held: not fed. */
  late: z.int(),
  pending_groups: z.int(),
  ready_groups: z.int(),
  leased_groups: z.int(),
  delivered: z.int(),
  acked: z.int(),
  dropped_stale: z.int(),
  /** Complete groups withheld whole because a member failed for infrastructure after its retries. */
  dropped_infra_failure: z.int(),
  /** Complete groups filtered for no signal (a batch's `filter`). */
  dropped_no_signal: z.int(),
  /** Groups withheld because a member was cancelled (cut). */
  dropped_cut: z.int(),
  /** Groups withheld because a member was ended while it ran for staleness (termination STALE). */
  dropped_cancelled: z.int().default(0),
  /** Results of infrastructure failures whose slot was re-run: never members, their replacements are. */
  retried: z.int(),
  /** Groups delivered with infrastructure failures among their members (`on_infra_failure: "deliver_valid"`). */
  delivered_partial: z.int(),
  partial_released: z.int(),
  lease_expired: z.int(),
  /** Model calls of ingested rollouts an `interrupt` sync cut, and those that went on from the tokens they kept (partial rollouts). */
  calls_interrupted: z.int(),
  calls_resumed: z.int(),
});
export type FeedCounts = z.infer<typeof FeedCounts>;

/** Groups of one batch the feed holds now. */
export const BatchCounts = FeedCounts.pick({
  pending_groups: true,
  ready_groups: true,
  leased_groups: true,
});
export type BatchCounts = z.infer<typeof BatchCounts>;

/** The feed's live group counts by group state (counted from the groups, never stored). */
export const LIVE_COUNT_OF_STATE = {
  pending: "pending_groups",
  ready: "ready_groups",
  leased: "leased_groups",
} as const satisfies Record<string, keyof BatchCounts>;

/** A counter the feed stores per training mode and adds to as groups move (every count that is not a live one). */
export type FeedCounterName = Exclude<keyof FeedCounts, keyof BatchCounts>;

/** Every stored counter's name. */
export const FEED_COUNTER_NAMES = Object.keys(FeedCounts.shape).filter(
  (name) => !(name in BatchCounts.shape),
) as FeedCounterName[];

/** All counts at zero. */
export function zeroFeedCounts(): FeedCounts {
  return Object.fromEntries(Object.keys(FeedCounts.shape).map((name) => [name, 0])) as FeedCounts;
}

/** A batch's live counts at zero. */
export function zeroBatchCounts(): BatchCounts {
  return Object.fromEntries(Object.keys(BatchCounts.shape).map((name) => [name, 0])) as BatchCounts;
}

/** One batch in the feed's stats: the groups it holds now, and those it dropped (remembered, never delivered). */
export const BatchFeedCounts = BatchCounts.extend({
  dropped_groups: z.int(),
  dropped_by_reason: z.record(z.string(), z.int()).default({}),
});
export type BatchFeedCounts = z.infer<typeof BatchFeedCounts>;

/** `GET /v1/feed/stats`. */
export const FeedStats = FeedCounts.extend({
  by_training_mode: z.record(z.string(), FeedCounts),
  /** Groups held now and groups dropped, per batch (groups of no batch are left out); narrowed by the StatsQuery. */
  by_batch: z.record(z.string(), BatchFeedCounts),
  active_leases: z.int(),
  config: FeedConfig,
  /** Completion tokens of ingested rollouts by the policy version that generated them (partial rollouts mix versions within a call). */
  tokens_by_policy_version: z.record(z.string(), z.int()).default({}),
});
export type FeedStats = z.infer<typeof FeedStats>;
