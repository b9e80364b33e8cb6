/** @module A batch's spec and progress cursor, persisted as one validated row of its tracker. */
import { z } from "zod";
import { BatchId, DEFAULT_REFILL_BUDGET, OnStale } from "../../schemas/batch";
import { DEFAULT_MEMBER_RETRIES } from "../../schemas/batch";
import { InfraFailurePolicy, MAX_MEMBER_RETRIES, SignalFilter } from "../../schemas/member-outcome";
import { RolloutConfig } from "../../schemas/rollout-config";
import { DataManagerName } from "../../schemas/rollout-group";
import { BatchTree } from "../../schemas/batch-tree";
import { batchRolloutId } from "../../schemas/batch-rollout-id";

/** Version of the persisted BatchRecord shape. */
export const BATCH_RECORD_SCHEMA_VERSION = 1;

/**
 * What a batch is (with defaults resolved) and how far its fan-out got. Rollout `k` of the batch
 * is row `floor(k / n)`, sample `k % n`; roots below `next_index` were released (created or
 * being created), the rest wait. A tree's children are not indexed: each is released when its
 * parent ends (tree-slots.ts).
 */
export const BatchRecord = z
  .object({
    schema_version: z.literal(BATCH_RECORD_SCHEMA_VERSION),
    batch_id: BatchId,
    /** SHA-256 of the canonical batch message: the same message again is a no-op, another a conflict. */
    fingerprint: z.string().regex(/^[0-9a-f]{64}$/),
    agent: z.string().min(1),
    mode: z.enum(["train", "val"]),
    n: z.int().min(1),
    config: RolloutConfig,
    training_mode: z.string().min(1),
    data_manager: DataManagerName,
    max_concurrent: z.int().min(1),
    dataset_key: z.string().nullable(),
    rows: z.int().min(1),
    /** rows × n × the tree's nodes (1 without a tree): every slot, roots and tree children. */
    total: z.int().min(1),
    next_index: z.int().min(0),
    cancelled_at: z.number().nullable(),
    /** Re-runs of a slot after infrastructure failures. */
    max_member_retries: z.int().min(0).max(MAX_MEMBER_RETRIES).default(DEFAULT_MEMBER_RETRIES),
    /** Groups with signal after which the batch is done (over-sampling); null: every row. */
    target_groups: z.int().min(1).nullable().default(null),
    filter: SignalFilter.nullable().default(null),
    on_infra_failure: InfraFailurePolicy.default("withhold"),
    /** Tree sampling (batch-tree.ts); null: independent samples. */
    tree: BatchTree.nullable().default(null),
    /** When `target_groups` was met: nothing more is released, what runs is cancelled (cut); cleared when a group lost to staleness reopens it (stale-refill.ts). */
    cut_at: z.number().nullable().default(null),
    /** What a group lost to staleness does: replaced at once (`drop`) or after the trainer caught up (`wait`). */
    on_stale: OnStale.default("drop"),
    /** Groups lost to staleness replaced from the reserve rows; past it the batch ends short. */
    refill_budget: z.int().min(0).default(DEFAULT_REFILL_BUDGET),
    created_at: z.number(),
    updated_at: z.number(),
    finished_at: z.number().nullable(),
  })
  .strict()
  .refine((record) => record.next_index <= record.total, {
    message: "next_index must be <= total",
    path: ["next_index"],
  });
export type BatchRecord = z.infer<typeof BatchRecord>;

/** Where rollout `k` of a batch sits: its row, its sample, and its deterministic ids. */
export interface RolloutSlot {
  rollout_id: string;
  row_index: number;
  sample_index: number;
  /** Which run of the slot (0 first; k after k infrastructure failures). Default 0. */
  attempt?: number;
  /** A tree child's parent: the rollout id of the parent run it is forked from (tree-slots.ts). */
  parent_id?: string | null;
}

/**
 * The slot's k-th re-run (k >= 1): `<batch_id>:<row>:<sample>.retry-<k>`. Deterministic, so a
 * re-run created twice (a redelivered result) is the same rollout, and a distinct id from the
 * first run's, so the feed's dedupe by rollout id keeps them apart.
 */
export function retrySlot(slot: RolloutSlot, attempt: number): RolloutSlot {
  return {
    rollout_id: `${baseSlotId(slot.rollout_id)}.retry-${attempt}`,
    row_index: slot.row_index,
    sample_index: slot.sample_index,
    attempt,
    parent_id: slot.parent_id ?? null,
  };
}

const RETRY_SUFFIX = /\.retry-[0-9]+$/;

/** The slot a run belongs to: its rollout id without a `.retry-<k>` suffix. */
export function baseSlotId(rolloutId: string): string {
  return rolloutId.replace(RETRY_SUFFIX, "");
}

/** Rollout `index` of the batch: id `<batch_id>:<row>:<sample>`. */
export function slotAt(record: Pick<BatchRecord, "batch_id" | "n">, index: number): RolloutSlot {
  const row = Math.floor(index / record.n);
  const sample = index % record.n;
  return {
    rollout_id: batchRolloutId(record.batch_id, row, sample),
    row_index: row,
    sample_index: sample,
  };
}

/** The GRPO group uid of a row: `<batch_id>:<row>`. */
export function groupUid(batchId: string, rowIndex: number): string {
  return `${batchId}:${rowIndex}`;
}

/**
 * The batch a group uid of the form `<batch_id>:<row>`, or a tree node's `<batch_id>:<row>:<sample>(.t<k>-<i>)*.t<k>`,
 * would belong to (when the head is a valid batch id), or undefined. Used to keep callers from
 * adding members to a batch's group.
 */
export function batchOfGroupUid(uid: string): string | undefined {
  const match =
    /^(.+):(0|[1-9][0-9]*)$/.exec(uid) ??
    /^(.+):(0|[1-9][0-9]*):(0|[1-9][0-9]*)(\.t[0-9]+-[0-9]+)*\.t[0-9]+$/.exec(uid);
  if (!match) return undefined;
  return BatchId.safeParse(match[1]).success ? match[1] : undefined;
}
