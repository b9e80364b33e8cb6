/** @module Assembling the feed's stats from its counters and live group counts. */
import {
  batchSelected,
  type BatchCounts,
  type BatchFeedCounts,
  FEED_COUNTER_NAMES,
  type FeedConfig,
  type FeedCounts,
  type FeedStats,
  LIVE_COUNT_OF_STATE,
  type StatsQuery,
  zeroBatchCounts,
  zeroFeedCounts,
} from "../../schemas/feed";
import type { GenerationStats } from "../../schemas/generation-stats";
import { type FeedStorage, VERSION_TOKENS_PREFIX } from "./feed-storage";

function liveCountOf(state: string): keyof BatchCounts | undefined {
  return LIVE_COUNT_OF_STATE[state as keyof typeof LIVE_COUNT_OF_STATE];
}

/** Live and dropped group counts of the batches `query` selects (every named id listed, zeros when it holds nothing). */
function batchCounts(storage: FeedStorage, query: StatsQuery): Record<string, BatchFeedCounts> {
  const byBatch: Record<string, BatchFeedCounts> = {};
  const of = (batchId: string) =>
    (byBatch[batchId] ??= { ...zeroBatchCounts(), dropped_groups: 0, dropped_by_reason: {} });
  for (const id of query.batch_id ?? []) of(id);
  for (const row of storage.batchCounts()) {
    const key = liveCountOf(row.state);
    if (key && batchSelected(query, row.batch_id)) of(row.batch_id)[key] += row.n;
  }
  for (const row of storage.dropped.countsByBatch()) {
    if (!batchSelected(query, row.batch_id)) continue;
    const counts = of(row.batch_id);
    counts.dropped_groups += row.n;
    counts.dropped_by_reason[row.reason] = (counts.dropped_by_reason[row.reason] ?? 0) + row.n;
  }
  return byBatch;
}

/** Totals, per-mode and per-batch counts, the number of active leases and the config in force. */
export function buildStats(
  storage: FeedStorage,
  config: FeedConfig,
  query: StatsQuery = {},
): FeedStats {
  const totals = zeroFeedCounts();
  const byMode: Record<string, FeedCounts> = {};
  const add = (mode: string, key: keyof FeedCounts, n: number): void => {
    totals[key] += n;
    const counts = (byMode[mode] ??= zeroFeedCounts());
    counts[key] += n;
  };
  const tokensByVersion: Record<string, number> = {};
  for (const row of storage.counters()) {
    if (row.name.startsWith(VERSION_TOKENS_PREFIX))
      tokensByVersion[row.name.slice(VERSION_TOKENS_PREFIX.length)] = row.n;
    const key = FEED_COUNTER_NAMES.find((name) => name === row.name);
    if (key) add(row.training_mode, key, row.n);
  }
  for (const row of storage.liveCounts()) {
    const key = liveCountOf(row.state);
    if (key) add(row.training_mode, key, row.n);
  }
  return {
    ...totals,
    by_training_mode: byMode,
    by_batch: batchCounts(storage, query),
    active_leases: storage.activeLeaseCount(),
    config,
    tokens_by_policy_version: tokensByVersion,
  };
}

/** Counts what a newly seen rollout's calls generated (absent on messages published before it). */
export function tallyGeneration(
  storage: FeedStorage,
  mode: string,
  generation: GenerationStats | undefined,
): void {
  if (!generation) return;
  storage.bump(mode, "calls_interrupted", generation.calls_interrupted);
  storage.bump(mode, "calls_resumed", generation.calls_resumed);
  for (const [version, tokens] of Object.entries(generation.tokens_by_policy_version))
    storage.bumpVersionTokens(version, tokens);
}
