/** @module Assembling the feed's stats from its counters and live group counts. */
import { batchSelected, type BatchCounts, type FeedConfig, type FeedCounts, type FeedStats, type StatsQuery } from "../../schemas/feed";
import type { FeedStorage } from "./feed-storage";

const COUNTER_KEYS = ["ingested", "duplicates", "late", "delivered", "acked", "dropped_stale", "partial_released", "lease_expired"] as const;
const STATE_KEYS = { pending: "pending_groups", ready: "ready_groups", leased: "leased_groups" } as const;

/** All counts at zero. */
export function zeroCounts(): FeedCounts {
  return { ingested: 0, duplicates: 0, late: 0, pending_groups: 0, ready_groups: 0, leased_groups: 0, delivered: 0, acked: 0, dropped_stale: 0, partial_released: 0, lease_expired: 0 };
}

/** Live group counts of the batches `query` selects (every named id listed, zeros when it holds nothing). */
function batchCounts(storage: FeedStorage, query: StatsQuery): Record<string, BatchCounts> {
  const byBatch: Record<string, BatchCounts> = {};
  for (const id of query.batch_id ?? []) byBatch[id] = { pending_groups: 0, ready_groups: 0, leased_groups: 0 };
  for (const row of storage.batchCounts()) {
    const key = STATE_KEYS[row.state as keyof typeof STATE_KEYS];
    if (!key || !batchSelected(query, row.batch_id)) continue;
    const counts = (byBatch[row.batch_id] ??= { pending_groups: 0, ready_groups: 0, leased_groups: 0 });
    counts[key] += row.n;
  }
  return byBatch;
}

/** Totals, per-mode and per-batch counts, the number of active leases and the config in force. */
export function buildStats(storage: FeedStorage, config: FeedConfig, query: StatsQuery = {}): FeedStats {
  const totals = zeroCounts();
  const byMode: Record<string, FeedCounts> = {};
  const add = (mode: string, key: keyof FeedCounts, n: number): void => {
    totals[key] += n;
    const counts = (byMode[mode] ??= zeroCounts());
    counts[key] += n;
  };
  for (const row of storage.counters()) {
    const key = COUNTER_KEYS.find((name) => name === row.name);
    if (key) add(row.training_mode, key, row.n);
  }
  for (const row of storage.liveCounts()) {
    const key = STATE_KEYS[row.state as keyof typeof STATE_KEYS];
    if (key) add(row.training_mode, key, row.n);
  }
  return { ...totals, by_training_mode: byMode, by_batch: batchCounts(storage, query), active_leases: storage.activeLeaseCount(), config };
}
