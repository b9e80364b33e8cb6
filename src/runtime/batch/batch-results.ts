/** @module Result shapes of the batch tracker's RPC methods: expected failures are values, not throws. */
import type { BatchProgress } from "../../schemas/batch";

/**
 * One problem with a batch: `path` names the request field (`rows.3.prompt`, `n`, `dataset_key`);
 * for a dataset, `row` (0-based), `line` (JSONL, 1-based) and `field` say where in the file.
 */
export interface BatchIssue {
  path: string;
  message: string;
  row?: number;
  line?: number;
  field?: string;
}

/** `submit`: the batch (new, or the same one again), or why it was refused. */
export type SubmitResult =
  | { ok: true; created: boolean; progress: BatchProgress }
  | { ok: false; reason: "invalid"; errors: BatchIssue[] }
  | { ok: false; reason: "conflict"; message: string; progress: BatchProgress };

/** `onResult`: recorded, a duplicate (already terminal), or not this batch's rollout. */
export type ResultAck =
  | { ok: true; duplicate: boolean }
  | { ok: false; reason: "not_found" | "invalid" | "unknown_rollout"; message: string };

/** `cancel`: the progress after cancelling, or no such batch. */
export type CancelResult =
  { ok: true; progress: BatchProgress } | { ok: false; reason: "not_found" };
