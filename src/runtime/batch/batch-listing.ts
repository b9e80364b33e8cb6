/**
 * @module Read-only queries over a batch tracker's tables for people: filtered, paginated slot
 * listings, the reward's distribution and breakdowns, and per-row counts for evaluation. Every
 * listing is one page of SQL (LIMIT/OFFSET over the `(row_index, sample_index)` index), so a batch
 * of 10,000 rollouts costs the same per page as a batch of 10.
 */
import type { SqlPort, SqlValue } from "../../ports";
import type {
  EvalRow,
  RewardGroup,
  RewardHistogram,
  RolloutListEntry,
  RolloutListPage,
  RolloutListQuery,
} from "../../schemas/batch-listing";
import type { TerminationReason } from "../../schemas/termination";
import { batchRolloutId } from "../../schemas/batch-rollout-id";
import { groupUid, type BatchRecord } from "./batch-state";
import { slotGroup } from "./tree-slots";

// A re-run slot's superseded first result is listed, but never counts as the slot's outcome.
const FINISHED = `o.status IN ('succeeded', 'failed', 'cancelled') AND o.superseded = 0`;
const DATA_SOURCE = `COALESCE(json_extract(r.task, '$.extra_args.data_source'), '')`;
/** Up to this many distinct rewards get a bin each (binary and graded rewards); more are binned evenly. */
const DISTINCT_BINS = 12;
const EVEN_BINS = 10;

interface SlotRow extends Record<string, SqlValue> {
  row_index: number;
  sample_index: number;
  agent: string;
  data_source: string;
  status: string;
  termination_reason: string | null;
  reward: number | null;
  rollout_id: string | null;
  attempt: number;
  superseded: number;
  outcome: string | null;
}

/** FROM clause and its bindings: released rollouts only, or every slot of rows × n. */
function slotSource(
  record: BatchRecord,
  includeUnreleased: boolean,
): { sql: string; bindings: SqlValue[]; status: string } {
  if (!includeUnreleased)
    return {
      sql: `FROM rollouts o JOIN rows r ON r.row_index = o.row_index`,
      bindings: [],
      status: "o.status",
    };
  // Slots not released yet have no rollouts row: a recursive CTE numbers the samples of each row.
  const unreleased = record.cancelled_at !== null ? "cancelled" : "not_released";
  return {
    sql: `FROM rows r CROSS JOIN samples s LEFT JOIN rollouts o ON o.row_index = r.row_index AND o.sample_index = s.k AND o.superseded = 0`,
    bindings: [unreleased],
    status: "COALESCE(o.status, ?)",
  };
}

function samplesCte(
  record: BatchRecord,
  includeUnreleased: boolean,
): { sql: string; bindings: SqlValue[] } {
  if (!includeUnreleased) return { sql: "", bindings: [] };
  return {
    sql: `WITH RECURSIVE samples(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM samples WHERE k + 1 < ?) `,
    bindings: [record.n],
  };
}

/** WHERE clause for the query's filters. `statusExpr` may hold one binding (the unreleased status). */
function filters(
  query: RolloutListQuery,
  statusExpr: string,
  statusBindings: SqlValue[],
): { sql: string; bindings: SqlValue[] } {
  const clauses: string[] = [];
  const bindings: SqlValue[] = [];
  if (query.status !== undefined) {
    clauses.push(`${statusExpr} = ?`);
    bindings.push(...statusBindings, query.status);
  }
  if (query.reason !== undefined)
    (clauses.push(`o.termination_reason = ?`), bindings.push(query.reason));
  if (query.agent !== undefined) (clauses.push(`r.agent = ?`), bindings.push(query.agent));
  if (query.data_source !== undefined)
    (clauses.push(`${DATA_SOURCE} = ?`), bindings.push(query.data_source));
  if (query.reward_min !== undefined)
    (clauses.push(`o.reward >= ?`), bindings.push(query.reward_min));
  if (query.reward_max !== undefined)
    (clauses.push(`o.reward <= ?`), bindings.push(query.reward_max));
  return { sql: clauses.length > 0 ? `WHERE ${clauses.join(" AND ")}` : "", bindings };
}

/** One page of the batch's slots in (row, sample) order, and how many match in all. */
export function listSlots(
  sql: SqlPort,
  record: BatchRecord,
  query: RolloutListQuery,
): RolloutListPage {
  const cte = samplesCte(record, query.include_unreleased);
  const source = slotSource(record, query.include_unreleased);
  const where = filters(query, source.status, source.bindings);
  const total =
    sql
      .exec<{ n: number }>(
        `${cte.sql}SELECT COUNT(*) AS n ${source.sql} ${where.sql}`,
        ...cte.bindings,
        ...where.bindings,
      )
      .toArray()[0]?.n ?? 0;
  const sampleColumn = query.include_unreleased ? "s.k" : "o.sample_index";
  const rows = sql
    .exec<SlotRow>(
      `${cte.sql}SELECT r.row_index AS row_index, ${sampleColumn} AS sample_index, r.agent AS agent, ${DATA_SOURCE} AS data_source,
         ${source.status} AS status, o.termination_reason AS termination_reason, o.reward AS reward,
         o.rollout_id AS rollout_id, COALESCE(o.attempt, 0) AS attempt, COALESCE(o.superseded, 0) AS superseded, o.outcome AS outcome
       ${source.sql} ${where.sql} ORDER BY r.row_index, ${sampleColumn}, COALESCE(o.attempt, 0) LIMIT ? OFFSET ?`,
      ...cte.bindings,
      ...source.bindings,
      ...where.bindings,
      query.limit,
      query.offset,
    )
    .toArray();
  const rollouts: RolloutListEntry[] = rows.map((row) => ({
    rollout_id: row.rollout_id ?? batchRolloutId(record.batch_id, row.row_index, row.sample_index),
    row_index: row.row_index,
    sample_index: row.sample_index,
    // A tree child's group is its node's (tree-slots.ts); a root's, the row's.
    uid: row.rollout_id
      ? slotGroup(record, {
          rollout_id: row.rollout_id,
          row_index: row.row_index,
          sample_index: row.sample_index,
        }).uid
      : groupUid(record.batch_id, row.row_index),
    agent: row.agent,
    data_source: String(row.data_source),
    status: row.status as RolloutListEntry["status"],
    termination_reason: row.termination_reason as TerminationReason | null,
    reward: row.reward,
    attempt: row.attempt,
    superseded: row.superseded === 1,
    outcome: row.outcome as RolloutListEntry["outcome"],
  }));
  return { total, offset: query.offset, limit: query.limit, rollouts };
}

/** Finished rollouts' rewards: one bin per value when there are few distinct values, else even bins. */
export function rewardHistogram(sql: SqlPort): RewardHistogram {
  const distinct = sql
    .exec<{ reward: number; n: number }>(
      `SELECT o.reward AS reward, COUNT(*) AS n FROM rollouts o WHERE ${FINISHED} AND o.reward IS NOT NULL GROUP BY o.reward ORDER BY o.reward LIMIT ?`,
      DISTINCT_BINS + 1,
    )
    .toArray();
  if (distinct.length === 0) return { min: null, max: null, bins: [] };
  if (distinct.length <= DISTINCT_BINS)
    return {
      min: distinct[0]!.reward,
      max: distinct.at(-1)!.reward,
      bins: distinct.map((d) => ({ from: d.reward, to: d.reward, count: d.n })),
    };
  const range = sql
    .exec<{ lo: number; hi: number }>(
      `SELECT MIN(o.reward) AS lo, MAX(o.reward) AS hi FROM rollouts o WHERE ${FINISHED} AND o.reward IS NOT NULL`,
    )
    .toArray()[0]!;
  const width = (range.hi - range.lo) / EVEN_BINS;
  const counts = sql
    .exec<{ bin: number; n: number }>(
      `SELECT MIN(CAST((o.reward - ?) / ? AS INTEGER), ?) AS bin, COUNT(*) AS n FROM rollouts o WHERE ${FINISHED} AND o.reward IS NOT NULL GROUP BY bin`,
      range.lo,
      width,
      EVEN_BINS - 1,
    )
    .toArray();
  const byBin = new Map(counts.map((c) => [c.bin, c.n]));
  const bins = Array.from({ length: EVEN_BINS }, (_, i) => ({
    from: range.lo + i * width,
    to: i === EVEN_BINS - 1 ? range.hi : range.lo + (i + 1) * width,
    count: byBin.get(i) ?? 0,
  }));
  return { min: range.lo, max: range.hi, bins };
}

/** Finished rollouts and their mean reward, grouped by `data_source` or `agent`. */
export function rewardBy(sql: SqlPort, key: "data_source" | "agent"): RewardGroup[] {
  const column = key === "agent" ? "r.agent" : DATA_SOURCE;
  return sql
    .exec<{ key: string; finished: number; rewarded: number; mean: number | null }>(
      `SELECT ${column} AS key, COUNT(*) AS finished, COUNT(o.reward) AS rewarded, AVG(o.reward) AS mean
       FROM rollouts o JOIN rows r ON r.row_index = o.row_index WHERE ${FINISHED} GROUP BY key ORDER BY key`,
    )
    .toArray()
    .map((row) => ({ ...row, key: String(row.key) }));
}

/** Per row: finished samples, how many reached `passThreshold`, and the reward sum (every row, finished or not). */
export function evalRows(sql: SqlPort, passThreshold: number): EvalRow[] {
  return sql
    .exec<{
      row_index: number;
      data_source: string;
      finished: number;
      passed: number;
      reward_sum: number;
      rewarded: number;
    }>(
      `SELECT r.row_index AS row_index, ${DATA_SOURCE} AS data_source, COUNT(o.rollout_id) AS finished,
         COALESCE(SUM(o.reward >= ?), 0) AS passed, COALESCE(SUM(o.reward), 0) AS reward_sum, COUNT(o.reward) AS rewarded
       FROM rows r LEFT JOIN rollouts o ON o.row_index = r.row_index AND ${FINISHED}
       GROUP BY r.row_index ORDER BY r.row_index`,
      passThreshold,
    )
    .toArray()
    .map((row) => ({ ...row, data_source: String(row.data_source) }));
}

/** Finished rollouts that did not pass (reward below `passThreshold` or none), by termination reason. */
export function failureReasons(sql: SqlPort, passThreshold: number): Record<string, number> {
  const rows = sql
    .exec<{ reason: string | null; n: number }>(
      `SELECT o.termination_reason AS reason, COUNT(*) AS n FROM rollouts o WHERE ${FINISHED} AND (o.reward IS NULL OR o.reward < ?) GROUP BY reason ORDER BY n DESC`,
      passThreshold,
    )
    .toArray();
  return Object.fromEntries(rows.map((row) => [row.reason ?? "UNKNOWN", row.n]));
}
