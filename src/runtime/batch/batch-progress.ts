/** @module A batch's progress, computed from its record and its rollouts table. */
import {
  BatchProgress,
  type BatchCounts,
  type BatchRefill,
  type BatchStatus,
} from "../../schemas/batch";
import { TerminationReason } from "../../schemas/termination";
import type { BatchRecord } from "./batch-state";
import type { BatchStorage, StoredVerdict } from "./batch-storage";
import { groupsDelivered } from "./batch-signal";

function statusOf(record: BatchRecord): BatchStatus {
  if (record.cancelled_at !== null) return record.finished_at === null ? "cancelling" : "cancelled";
  return record.finished_at === null ? "running" : "completed";
}

function groupProgress(
  record: BatchRecord,
  verdicts: Map<StoredVerdict, number>,
): BatchProgress["groups"] {
  const count = (verdict: StoredVerdict) => verdicts.get(verdict) ?? 0;
  const delivered = groupsDelivered(verdicts);
  return {
    target: record.target_groups,
    complete: [...verdicts.values()].reduce((sum, n) => sum + n, 0),
    delivered,
    filtered: count("no_signal"),
    withheld: count("infra_failure"),
    cut: count("cut"),
    cut_at: record.cut_at,
  };
}

/**
 * Counts by status add up to `total` (rows × n × a tree's nodes): rollouts not yet released are `not_released`, or
 * `cancelled` once the batch is cancelled (they are never created). Termination reasons and the
 * reward mean cover rollouts that finished.
 */
export function buildProgress(
  record: BatchRecord,
  storage: BatchStorage,
  refill?: BatchRefill,
): BatchProgress {
  const byStatus = storage.countByStatus();
  // Roots are released by index, tree children as their parents end.
  const released = record.next_index + (record.tree ? storage.tree.countSlots() : 0);
  const unreleased = record.total - released;
  // A cut batch (its target met) never creates the rest either.
  const cancelled = record.cancelled_at !== null || record.cut_at !== null;
  const counts: BatchCounts = {
    not_released: cancelled ? 0 : unreleased,
    queued: byStatus.get("queued") ?? 0,
    running: byStatus.get("running") ?? 0,
    succeeded: byStatus.get("succeeded") ?? 0,
    failed: byStatus.get("failed") ?? 0,
    cancelled: (byStatus.get("cancelled") ?? 0) + (cancelled ? unreleased : 0),
  };
  const reasons: Partial<Record<TerminationReason, number>> = {};
  for (const [reason, count] of storage.countByReason()) {
    const parsed = TerminationReason.safeParse(reason);
    if (parsed.success) reasons[parsed.data] = count;
  }
  return BatchProgress.parse({
    batch_id: record.batch_id,
    agent: record.agent,
    mode: record.mode,
    training_mode: record.training_mode,
    data_manager: record.data_manager,
    dataset_key: record.dataset_key,
    status: statusOf(record),
    done: record.finished_at !== null,
    rows: record.rows,
    n: record.n,
    rollouts: record.total,
    released,
    in_flight: counts.queued + counts.running,
    max_concurrent: record.max_concurrent,
    counts,
    termination_reasons: reasons,
    reward: storage.rewardStats(),
    retried: storage.countSuperseded(),
    groups: groupProgress(record, storage.countVerdicts()),
    ...(refill ? { refill } : {}),
    created_at: record.created_at,
    updated_at: Math.max(record.updated_at, storage.lastChange()),
    finished_at: record.finished_at,
  });
}
