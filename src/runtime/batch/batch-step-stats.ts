/**
 * @module The numbers a training step is judged by, over one batch tracker's tables (the run view):
 * reward spread, response length, groups without signal, policy versions, throughput. Each is one
 * aggregate SQL query over the slots' current runs, so a step of 10,000 rollouts costs a few
 * index scans, not a read of every session.
 */
import type { SqlPort } from "../../ports";
import type { ResultMessage } from "../../schemas/result-message";
import type { BatchStepStats, TrainerReport } from "../../schemas/run-view";
import { readMetaText, writeMetaText } from "../meta-table";
import type { BatchRecord } from "./batch-state";

// As the listing's FINISHED: a re-run slot's superseded first result never counts.
const FINISHED = `status IN ('succeeded', 'failed', 'cancelled') AND superseded = 0`;

/** What a result message says its calls generated: completion tokens (summed over policy versions) and the versions. */
export function generatedBy(
  message: Pick<ResultMessage, "generation" | "policy_version_start" | "policy_version_end">,
): { completion_tokens: number | null; policy_version_start: number; policy_version_end: number } {
  const byVersion = message.generation?.tokens_by_policy_version;
  const completion_tokens = byVersion
    ? Object.values(byVersion).reduce((sum, n) => sum + n, 0)
    : null;
  return {
    completion_tokens,
    policy_version_start: message.policy_version_start,
    policy_version_end: message.policy_version_end,
  };
}

/** The batch's step numbers (see BatchStepStats). */
export function stepStats(sql: SqlPort, record: BatchRecord): BatchStepStats {
  const reward = sql
    .exec<{
      n: number;
      mean: number | null;
      sq: number | null;
      lo: number | null;
      hi: number | null;
    }>(
      `SELECT COUNT(reward) AS n, AVG(reward) AS mean, AVG(reward * reward) AS sq, MIN(reward) AS lo, MAX(reward) AS hi FROM rollouts WHERE ${FINISHED}`,
    )
    .toArray()[0]!;
  const std =
    reward.mean === null || reward.sq === null
      ? null
      : Math.sqrt(Math.max(0, reward.sq - reward.mean * reward.mean));
  const lengths = sql
    .exec<{ n: number; mean: number | null }>(
      `SELECT COUNT(completion_tokens) AS n, AVG(completion_tokens) AS mean FROM rollouts WHERE ${FINISHED}`,
    )
    .toArray()[0]!;
  // Nearest-rank p90: the ceil(0.9 n)-th smallest.
  const p90 =
    lengths.n === 0
      ? null
      : (sql
          .exec<{ v: number }>(
            `SELECT completion_tokens AS v FROM rollouts WHERE ${FINISHED} AND completion_tokens IS NOT NULL ORDER BY completion_tokens LIMIT 1 OFFSET ?`,
            Math.ceil(0.9 * lengths.n) - 1,
          )
          .toArray()[0]?.v ?? null);
  const groups = sql
    .exec<{ complete: number; flat: number }>(
      `SELECT COUNT(*) AS complete, COALESCE(SUM(flat), 0) AS flat FROM (
         SELECT g.row_index, (SELECT COUNT(*) > 1 AND MIN(COALESCE(o.reward, 0)) = MAX(COALESCE(o.reward, 0)) FROM rollouts o WHERE o.row_index = g.row_index AND o.superseded = 0) AS flat
         FROM group_verdicts g)`,
    )
    .toArray()[0]!;
  const versions = sql
    .exec<{ lo: number | null; hi: number | null; last: number | null; done: number }>(
      `SELECT MIN(policy_version_start) AS lo, MAX(policy_version_end) AS hi, MAX(finished_at) AS last, COUNT(*) AS done FROM rollouts WHERE ${FINISHED}`,
    )
    .toArray()[0]!;
  const seconds = versions.last === null ? 0 : (versions.last - record.created_at) / 1000;
  return {
    reward: { count: reward.n, mean: reward.mean, std, min: reward.lo, max: reward.hi },
    response_tokens: { count: lengths.n, mean: lengths.mean, p90 },
    groups: { complete: groups.complete, no_signal: groups.flat },
    policy_version: { min: versions.lo, max: versions.hi },
    rollouts_per_s: seconds > 0 ? versions.done / seconds : null,
    trainer: readTrainerReport(sql),
  };
}

/** The meta key the trainer's report of the batch is kept under. */
const TRAINER_REPORT_KEY = "trainer_report";

/** Keeps the trainer's report of the batch (validated by the caller), replacing an earlier one. */
export function writeTrainerReport(sql: SqlPort, report: TrainerReport): void {
  writeMetaText(sql, TRAINER_REPORT_KEY, JSON.stringify(report));
}

/** The trainer's report of the batch, or null before one arrived (stored validated). */
function readTrainerReport(sql: SqlPort): TrainerReport | null {
  const text = readMetaText(sql, TRAINER_REPORT_KEY);
  return text === undefined ? null : (JSON.parse(text) as TrainerReport);
}
