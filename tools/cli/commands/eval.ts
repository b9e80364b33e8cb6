/** @module `edge-rollout eval DATASET --agent NAME --n K`: a `val` batch, followed to the end, then pass@1 / pass@k and failures. */
import { MAX_BATCH_ROWS, type BatchProgress } from "../../../src/schemas/batch";
import { EvalReport } from "../../../src/schemas/eval-report";
import type { ApiClient } from "../api-client";
import { watchBatch } from "../batch-watch";
import { readDatasetFile } from "../dataset-file";
import { ExitCode, OperationError, UsageError } from "../errors";
import { formatEvalReport } from "../eval-format";
import { InterruptWatch } from "../interrupt";
import { checkBatchId, newBatchId } from "../options";
import type { Output } from "../output";
import { createProgressView } from "../progress-view";
import { finishedOf, rateAndEta, tallyOf } from "../progress-tally";

/** `eval`'s options after parsing. */
export interface EvalOptions {
  agent: string;
  n: number;
  /** k of pass@k; default n. */
  k?: number;
  limit?: number;
  batchId?: string;
  /** Another batch to put side by side (e.g. the same dataset under another policy version or model). */
  compare?: string;
  /** A sample passes at reward >= threshold. Default 1. */
  threshold: number;
  config?: Record<string, unknown>;
  maxConcurrent?: number;
  intervalMs: number;
}

/** `GET /v1/batches/:id/eval`, validated. */
export async function readEvalReport(
  client: ApiClient,
  batchId: string,
  k: number | undefined,
  threshold: number,
): Promise<EvalReport> {
  const query = new URLSearchParams({
    threshold: String(threshold),
    ...(k === undefined ? {} : { k: String(k) }),
  });
  const raw = await client.get<unknown>(
    `/v1/batches/${encodeURIComponent(batchId)}/eval?${query.toString()}`,
  );
  const parsed = EvalReport.safeParse(raw);
  if (!parsed.success)
    throw new OperationError(
      `the server's eval report of ${batchId} does not match this CLI's schema`,
      { details: parsed.error.issues.map((i) => ({ path: i.path.join("."), message: i.message })) },
    );
  return parsed.data;
}

/**
 * Submits the dataset as one `val` batch (stored, never fed to the trainer), follows it with a
 * progress bar, then prints the report; with `--compare`, the other batch's report beside it, at
 * the same k. Exit 0 when the batch completed, 1 when it was cancelled, 130 on Ctrl-C (left running).
 */
export async function runEval(
  datasetPath: string,
  options: EvalOptions,
  client: ApiClient,
  out: Output,
): Promise<ExitCode> {
  const dataset = await readDatasetFile(datasetPath, { limit: options.limit });
  if (dataset.rows.length > MAX_BATCH_ROWS)
    throw new UsageError(
      `eval runs one batch of at most ${MAX_BATCH_ROWS} rows; this dataset has ${dataset.rows.length} (use --limit)`,
    );
  if (options.k !== undefined && options.k > options.n)
    throw new UsageError(
      `--k ${options.k} is larger than --n ${options.n}: pass@k needs at least k samples per row`,
    );
  const batchId = options.batchId === undefined ? newBatchId() : checkBatchId(options.batchId, 0);
  const compared =
    options.compare === undefined
      ? undefined
      : await readEvalReport(client, options.compare, options.k ?? options.n, options.threshold);
  const body = {
    batch_id: batchId,
    agent: options.agent,
    rows: dataset.rows,
    n: options.n,
    mode: "val",
    ...(options.config ? { config: options.config } : {}),
    ...(options.maxConcurrent ? { max_concurrent: options.maxConcurrent } : {}),
  };
  const started = await client.post<{ created: boolean; progress: BatchProgress }>(
    "/v1/batches",
    body,
  );
  out.note(
    `${started.created ? "started" : "following"} val batch ${batchId}: ${started.progress.rollouts} rollouts (${started.progress.rows} rows × n=${options.n})`,
  );
  const view = createProgressView(out);
  const interrupts = new InterruptWatch();
  const t0 = Date.now();
  let atStart: number | null = null;
  try {
    const watched = await watchBatch(client, batchId, {
      intervalMs: options.intervalMs,
      signal: interrupts.signal,
      onProgress: (progress) => {
        const tally = tallyOf(progress);
        atStart ??= finishedOf(tally);
        view.update({
          tally,
          elapsedMs: Date.now() - t0,
          ...rateAndEta(finishedOf(tally), atStart, tally.rollouts, Date.now() - t0),
        });
      },
    });
    view.stop();
    if (watched.interrupted) {
      out.note(`interrupted; val batch ${batchId} keeps running (edge-rollout status ${batchId})`);
      return ExitCode.interrupted;
    }
    const report = await readEvalReport(client, batchId, options.k, options.threshold);
    out.result({ report, ...(compared ? { compare: compared } : {}) }, () =>
      formatEvalReport(report, compared),
    );
    return watched.progress.status === "cancelled" ? ExitCode.failure : ExitCode.ok;
  } finally {
    view.stop();
    interrupts.dispose();
  }
}
