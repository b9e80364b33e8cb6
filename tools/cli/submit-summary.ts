/** @module What `submit` reports when it ends, as JSON and as text (pure). */
import { formatCounts, formatDuration, formatNumber } from "./format";
import { finishedOf, rewardMean, type ProgressTally } from "./progress-tally";

/** How a submission ended. */
export type SubmitStatus = "completed" | "cancelled" | "submitted" | "left_running";

/** `submit`'s result: the `--json` document, and the source of the text summary. */
export interface SubmitSummary {
  ok: boolean;
  status: SubmitStatus;
  batch_ids: string[];
  agent: string;
  mode: "train" | "val";
  dataset: string;
  rows: number;
  n: number;
  rollouts: number;
  finished: number;
  succeeded: number;
  failed: number;
  cancelled: number;
  reward_mean: number | null;
  reward_count: number;
  termination_reasons: Record<string, number>;
  elapsed_ms: number;
  rollouts_per_s: number;
}

/** Builds the summary from the submission's tally. */
export function summarize(
  base: {
    status: SubmitStatus;
    batch_ids: string[];
    agent: string;
    mode: "train" | "val";
    dataset: string;
    rows: number;
    n: number;
  },
  tally: ProgressTally,
  elapsedMs: number,
  finishedAtStart = 0,
): SubmitSummary {
  const finished = finishedOf(tally);
  return {
    ok: base.status === "completed" || base.status === "submitted",
    ...base,
    rollouts: base.rows * base.n,
    finished,
    succeeded: tally.succeeded,
    failed: tally.failed,
    cancelled: tally.cancelled,
    reward_mean: rewardMean(tally),
    reward_count: tally.reward_count,
    termination_reasons: tally.termination_reasons,
    elapsed_ms: Math.round(elapsedMs),
    // Rollouts that ran (not cancelled ones, which end at once) since the command began.
    rollouts_per_s:
      elapsedMs > 0
        ? Number(
            (
              (Math.max(0, tally.succeeded + tally.failed - finishedAtStart) * 1000) /
              elapsedMs
            ).toFixed(2),
          )
        : 0,
  };
}

const HEADLINES: Record<SubmitStatus, string> = {
  completed: "completed",
  cancelled: "cancelled",
  submitted: "submitted (not waiting; follow with `npx edge-rollout status <batch>`)",
  left_running: "left running (follow it with `npx edge-rollout status <batch>`)",
};

/** The text summary, e.g. `batch b1: completed, 64 rollouts (16 rows × n=4) in 12.3s (5.2 rollouts/s)`. */
export function formatSubmitSummary(summary: SubmitSummary): string {
  const ids =
    summary.batch_ids.length === 1
      ? `batch ${summary.batch_ids[0]}`
      : `batches ${summary.batch_ids.join(", ")}`;
  const headline = HEADLINES[summary.status];
  const lines = [
    `${ids}: ${headline}`,
    `  ${summary.rollouts} rollouts (${summary.rows} rows × n=${summary.n}) of agent ${summary.agent}, mode ${summary.mode}, from ${summary.dataset}`,
  ];
  if (summary.status !== "submitted") {
    lines.push(
      `  finished ${summary.finished}/${summary.rollouts} in ${formatDuration(summary.elapsed_ms)} (${summary.rollouts_per_s.toFixed(1)} rollouts/s): succeeded ${summary.succeeded}, failed ${summary.failed}, cancelled ${summary.cancelled}`,
    );
    lines.push(
      `  reward mean ${formatNumber(summary.reward_mean)} over ${summary.reward_count} rollouts`,
    );
    lines.push(`  termination reasons: ${formatCounts(summary.termination_reasons)}`);
  }
  if (summary.status === "completed" && summary.mode === "train")
    lines.push(
      "next: npx edge-rollout drain --out samples.jsonl  (the groups are in the trainer feed)",
    );
  return lines.join("\n");
}
