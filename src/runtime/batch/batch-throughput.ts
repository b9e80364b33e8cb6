/** @module A batch's pace, from its progress alone: rollouts per second so far and the time left at that pace. */
import type { BatchProgress } from "../../schemas/batch";

/** Pace of a batch; `per_second` and `eta_ms` are null until something finished (and `eta_ms` once done). */
export interface BatchThroughput {
  finished: number;
  remaining: number;
  elapsed_ms: number;
  per_second: number | null;
  eta_ms: number | null;
}

/**
 * Finished rollouts (succeeded, failed, cancelled) over the time since the batch was created (until
 * it finished), and the remaining ones at that average pace.
 */
export function batchThroughput(
  progress: Pick<BatchProgress, "counts" | "rollouts" | "created_at" | "finished_at" | "done">,
  now: number,
): BatchThroughput {
  const { succeeded, failed, cancelled } = progress.counts;
  const finished = succeeded + failed + cancelled;
  const remaining = Math.max(0, progress.rollouts - finished);
  const elapsed_ms = Math.max(0, (progress.finished_at ?? now) - progress.created_at);
  const per_second = finished > 0 && elapsed_ms > 0 ? finished / (elapsed_ms / 1000) : null;
  const eta_ms = progress.done ? 0 : per_second ? (remaining / per_second) * 1000 : null;
  return { finished, remaining, elapsed_ms, per_second, eta_ms };
}
