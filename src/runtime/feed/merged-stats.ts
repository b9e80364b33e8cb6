/** @module The feed's stats over its shards: what `GET /v1/feed/stats` answers when the feed is sharded. */
import type { BatchFeedCounts, FeedCounts, FeedStats } from "../../schemas/feed";

function add<T extends Record<string, number>>(into: T | undefined, from: T): T {
  if (!into) return { ...from };
  const out = { ...into };
  for (const key of Object.keys(from) as Array<keyof T>)
    out[key] = (((out[key] ?? 0) as number) + (from[key] as number)) as T[keyof T];
  return out;
}

function addAll<T extends Record<string, number>>(
  parts: Array<Record<string, T>>,
): Record<string, T> {
  const out: Record<string, T> = {};
  for (const part of parts)
    for (const [key, counts] of Object.entries(part)) out[key] = add(out[key], counts);
  return out;
}

/** Per-batch counts over the shards, `dropped_by_reason` summed reason by reason. */
function mergeBatches(
  parts: Array<Record<string, BatchFeedCounts>>,
): Record<string, BatchFeedCounts> {
  const out: Record<string, BatchFeedCounts> = {};
  for (const part of parts) {
    for (const [batchId, { dropped_by_reason: reasons, ...counts }] of Object.entries(part)) {
      const into = out[batchId];
      out[batchId] = {
        ...add(into ? (({ dropped_by_reason: _r, ...rest }) => rest)(into) : undefined, counts),
        dropped_by_reason: add(into?.dropped_by_reason, reasons ?? {}),
      };
    }
  }
  return out;
}

/**
 * Shards' stats as one: every counter and live count summed (a group lives in exactly one shard,
 * so sums are exact), per training mode and per batch too; `active_leases` is the most any shard
 * holds (one pull's lease id is active in every shard it leased from, so a sum would count it
 * once per shard); the config is the first shard's (configure sets every shard's).
 */
export function mergeStats(shards: FeedStats[]): FeedStats {
  const [first] = shards;
  if (!first || shards.length === 1) return first!;
  const totals = shards
    .map(
      ({
        by_training_mode: _m,
        by_batch: _b,
        active_leases: _a,
        config: _c,
        tokens_by_policy_version: _t,
        ...counts
      }) => counts as FeedCounts,
    )
    .reduce<FeedCounts | undefined>((a, b) => add(a, b), undefined)!;
  return {
    ...totals,
    by_training_mode: addAll<FeedCounts>(shards.map((s) => s.by_training_mode)),
    by_batch: mergeBatches(shards.map((s) => s.by_batch)),
    active_leases: Math.max(...shards.map((s) => s.active_leases)),
    config: first.config,
    tokens_by_policy_version: shards.reduce<Record<string, number>>(
      (sum, shard) => add(sum, shard.tokens_by_policy_version),
      {},
    ),
  };
}
