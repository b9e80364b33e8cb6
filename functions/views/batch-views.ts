/**
 * @module What the batch API routes and the dashboard pages read about batches: one function per
 * view, so a number on a page is the number the API answers.
 */
import { objects } from "../../src/runtime/objects";
import { InvalidInputError, NotFoundError } from "../../src/errors";
import { scoreByDataSource, scoreRows } from "../../src/runtime/eval";
import { BatchId, type BatchProgress } from "../../src/schemas/batch";
import {
  BatchListQuery,
  RolloutListQuery,
  type BatchCatalogEntry,
  type BatchSummary,
  type RolloutListPage,
} from "../../src/schemas/batch-listing";
import type { BatchRunners } from "../../src/schemas/batch-runners";
import { EvalQuery, type EvalReport } from "../../src/schemas/eval-report";
import type { DroppedGroup } from "../../src/schemas/feed";
import type { AppEnv } from "../env";
import { parseQuery } from "../middleware/problem-details";

/** A catalog entry with the batch's progress (null if its tracker does not know it). */
export type ListedBatch = BatchCatalogEntry & { progress: BatchProgress | null };

/** Validates a batch id from a path; a bad one is a 400 naming `batch_id`. */
export function batchIdParam(raw: string): string {
  const parsed = BatchId.safeParse(raw);
  if (!parsed.success) {
    const message = parsed.error.issues[0]?.message ?? "invalid";
    throw new InvalidInputError(`batch_id: ${message}`, {
      status: 400,
      details: [{ path: "batch_id", message }],
    });
  }
  return parsed.data;
}

function missing(batchId: string): NotFoundError {
  return new NotFoundError(`batch ${batchId} does not exist`);
}

/** A batch's progress with the runners that claimed its external rollouts (empty for driven batches). */
export type BatchDetail = BatchProgress & { runners: BatchRunners };

/** `GET /v1/batches/:id`. */
export async function batchProgress(env: AppEnv, batchId: string): Promise<BatchDetail> {
  const stub = objects(env).batch(batchId);
  const [progress, runners] = await Promise.all([stub.progress(), stub.runners()]);
  if (!progress) throw missing(batchId);
  return { ...progress, runners };
}

/** `GET /v1/batches/:id/rollouts`: one filtered page (query parameters of RolloutListQuery). */
export async function batchRolloutsPage(
  env: AppEnv,
  batchId: string,
  raw: Record<string, string>,
): Promise<RolloutListPage> {
  const query = parseQuery(raw, RolloutListQuery);
  const page = await objects(env).batch(batchId).rollouts(query);
  if (!page) throw missing(batchId);
  if ("invalid" in page)
    throw new InvalidInputError(page.invalid.map((p) => `${p.path}: ${p.message}`).join("; "), {
      status: 400,
      details: page.invalid,
    });
  return page;
}

/** `GET /v1/batches/:id/summary`. */
export async function batchSummary(env: AppEnv, batchId: string): Promise<BatchSummary> {
  const summary = await objects(env).batch(batchId).summary();
  if (!summary) throw missing(batchId);
  return summary;
}

/** `GET /v1/batches/:id/eval`: pass@1, pass@k (k defaults to the batch's n), mean reward, per data source, failures. */
export async function batchEvalReport(
  env: AppEnv,
  batchId: string,
  raw: Record<string, string>,
): Promise<EvalReport> {
  const query = parseQuery(raw, EvalQuery);
  const stub = objects(env).batch(batchId);
  const [progress, evaluation] = await Promise.all([
    stub.progress(),
    stub.evaluation(query.threshold),
  ]);
  if (!progress || !evaluation) throw missing(batchId);
  const k = query.k ?? progress.n;
  return {
    batch_id: batchId,
    agent: progress.agent,
    mode: progress.mode,
    n: progress.n,
    k,
    pass_threshold: query.threshold,
    done: progress.done,
    total: scoreRows(evaluation.rows, k),
    by_data_source: scoreByDataSource(evaluation.rows, k),
    failures: evaluation.failures,
  };
}

/** `GET /v1/batches`: batches newest first from the catalog, each with its progress (read in parallel). */
export async function listBatches(
  env: AppEnv,
  raw: Record<string, string>,
): Promise<ListedBatch[]> {
  const query = parseQuery(raw, BatchListQuery);
  const entries = await objects(env).catalog().list(query);
  const progress = await Promise.all(
    entries.map((entry) => objects(env).batch(entry.batch_id).progress()),
  );
  return entries.map((entry, i) => ({ ...entry, progress: progress[i] ?? null }));
}

/** `GET /v1/batches/:id/dropped-groups`: the batch's groups the trainer feed dropped instead of delivering (oldest uid first). */
export async function batchDroppedGroups(
  env: AppEnv,
  batchId: string,
): Promise<{ batch_id: string; dropped_groups: DroppedGroup[] }> {
  return { batch_id: batchId, dropped_groups: await objects(env).feed().droppedGroups(batchId) };
}
