/** @module Reaching a batch's tracker (one Durable Object per batch id): start, results, progress. */
import type { CancelResult, ResultAck, SubmitResult } from "../src/runtime/batch/batch-results";
import type { BatchMessage, BatchProgress } from "../src/schemas/batch";
import { seriesOf, type BatchSummary, type EvalRow, type RolloutListPage } from "../src/schemas/batch-listing";
import type { ResultMessage } from "../src/schemas/result-message";
import type { BatchRunners } from "../src/schemas/batch-runners";
import { catalogStub } from "./catalog-stub";
import type { AppEnv } from "./env";

/** The RPC surface of the BatchTracker stub, spelled out (the generic stub types are too deep for the compiler). */
export interface BatchRpc {
  submit(message: BatchMessage): Promise<SubmitResult>;
  onResult(message: ResultMessage): Promise<ResultAck>;
  cancel(): Promise<CancelResult>;
  progress(): Promise<BatchProgress | undefined>;
  rollouts(query: unknown): Promise<RolloutListPage | { invalid: Array<{ path: string; message: string }> } | undefined>;
  summary(): Promise<BatchSummary | undefined>;
  evaluation(passThreshold: number): Promise<{ rows: EvalRow[]; failures: Record<string, number> } | undefined>;
  runnerSeen(runnerId: string, leaseMs: number): Promise<void>;
  runners(): Promise<BatchRunners>;
}

/** The BatchTracker stub for `batchId`. */
export function batchStub(env: AppEnv, batchId: string): BatchRpc {
  const namespace = env.BATCH_TRACKER;
  return namespace.get(namespace.idFromName(batchId)) as unknown as BatchRpc;
}

/**
 * Starts a batch: the one code path behind `POST /v1/batches` and the `edge-rollout-batches`
 * queue. The tracker validates, loads the dataset, stores the rows and releases the first chunk;
 * the same message again is a no-op.
 */
export async function startBatch(env: AppEnv, message: BatchMessage): Promise<SubmitResult> {
  const started = await batchStub(env, message.batch_id).submit(message);
  // Registered on every accepted submit, not only the first: a Worker that died between the two
  // calls leaves the batch unlisted until the same submit (idempotent) comes again.
  if (started.ok) {
    const { progress } = started;
    const entry = { batch_id: progress.batch_id, agent: progress.agent, mode: progress.mode, training_mode: progress.training_mode, series: seriesOf(progress.batch_id), rollouts: progress.rollouts, created_at: progress.created_at };
    const registered = await catalogStub(env).register(entry);
    if (!registered.ok) console.warn("batch not listed in the catalog", { batch_id: progress.batch_id, errors: registered.errors });
  }
  return started;
}

/** Reports one finished rollout to its batch's progress (the tracker dedupes by rollout id). */
export async function reportBatchResult(env: AppEnv, message: ResultMessage): Promise<void> {
  if (!message.batch_id) return;
  const ack = await batchStub(env, message.batch_id).onResult(message);
  if (!ack.ok) console.warn("batch result not recorded", { rollout_id: message.rollout_id, reason: ack.reason, message: ack.message });
}
