/** @module `edge-rollout submit`: a dataset file as one or more batches, followed to the end with a progress bar. */
import type { BatchProgress } from "../../../src/schemas/batch";
import type { JsonValue } from "../../../src/schemas/json";
import type { ApiClient } from "../api-client";
import { readBatch, watchBatch } from "../batch-watch";
import { CHUNK_SUFFIX_ROOM, chunkBatchIds, chunkRows, withFileIndex } from "../chunking";
import { readDatasetFile } from "../dataset-file";
import { ExitCode } from "../errors";
import {
  askYesNo,
  InterruptWatch,
  resolveInterruptPolicy,
  type InterruptPolicy,
} from "../interrupt";
import { checkBatchId, newBatchId } from "../options";
import type { Output } from "../output";
import { createProgressView } from "../progress-view";
import {
  addTallies,
  emptyTally,
  finishedOf,
  rateAndEta,
  tallyOf,
  type ProgressTally,
} from "../progress-tally";
import { formatSubmitSummary, summarize, type SubmitStatus } from "../submit-summary";

/** `submit`'s options after parsing. */
export interface SubmitOptions {
  agent: string;
  n: number;
  limit?: number;
  batchId?: string;
  mode: "train" | "val";
  maxConcurrent?: number;
  config?: Record<string, unknown>;
  trainingMode?: string;
  /** Rows per batch (default and most: 10,000); a larger dataset is split into several batches. */
  chunkRows?: number;
  /** False with --no-wait: submit and return. */
  wait: boolean;
  intervalMs: number;
  yes: boolean;
  onInterrupt?: InterruptPolicy;
}

/** The `POST /v1/batches` body of one chunk. */
function batchBody(
  options: SubmitOptions,
  batchId: string,
  rows: JsonValue[],
): Record<string, unknown> {
  return {
    batch_id: batchId,
    agent: options.agent,
    rows,
    n: options.n,
    mode: options.mode,
    ...(options.maxConcurrent === undefined ? {} : { max_concurrent: options.maxConcurrent }),
    ...(options.config === undefined ? {} : { config: options.config }),
    ...(options.trainingMode === undefined ? {} : { training_mode: options.trainingMode }),
  };
}

/** Starts one chunk's batch; an existing batch with the same id and body is followed, not duplicated. */
async function startChunk(
  client: ApiClient,
  out: Output,
  body: Record<string, unknown>,
): Promise<BatchProgress> {
  const started = await client.post<{ created: boolean; progress: BatchProgress }>(
    "/v1/batches",
    body,
  );
  const { progress } = started;
  out.note(
    `${started.created ? "started" : "already submitted, following"} batch ${progress.batch_id}: ${progress.rollouts} rollouts (${progress.rows} rows × n=${progress.n}), at most ${progress.max_concurrent} in flight`,
  );
  return progress;
}

/** Asks or applies the policy; returns whether the batch was cancelled. */
async function handleInterrupt(
  client: ApiClient,
  out: Output,
  batchId: string,
  policy: InterruptPolicy,
): Promise<boolean> {
  const cancel =
    policy === "cancel" ||
    (policy === "ask" &&
      (await askYesNo(`Cancel batch ${batchId}? Its finished rollouts are kept.`)));
  if (!cancel) return false;
  await client.post(`/v1/batches/${encodeURIComponent(batchId)}/cancel`, {});
  out.note(`cancelled batch ${batchId}`);
  return true;
}

/**
 * Reads the dataset, submits it (split into several batches when it exceeds 10,000 rows or the
 * request size, run one after another so `--max-concurrent` still bounds what is in flight) and,
 * unless `--no-wait`, follows the batches until done. Returns the exit code: 0 completed, 1 a batch
 * was cancelled by someone else, 130 interrupted (cancelled or left running, per policy).
 */
export async function runSubmit(
  datasetPath: string,
  options: SubmitOptions,
  client: ApiClient,
  out: Output,
): Promise<ExitCode> {
  const dataset = await readDatasetFile(datasetPath, { limit: options.limit });
  let chunks = chunkRows(
    dataset.rows,
    options.chunkRows === undefined ? {} : { maxRows: options.chunkRows },
  );
  if (chunks.length > 1) {
    let offset = 0;
    chunks = chunks.map((chunk) => chunk.map((row) => withFileIndex(row, offset++)));
  }
  const batchId =
    options.batchId === undefined
      ? newBatchId()
      : checkBatchId(options.batchId, chunks.length > 1 ? CHUNK_SUFFIX_ROOM : 0);
  const ids = chunkBatchIds(batchId, chunks.length);
  if (chunks.length > 1)
    out.note(
      `${dataset.rows.length} rows exceed one batch: submitting ${chunks.length} batches (${ids[0]} … ${ids.at(-1)}), one after another`,
    );
  const base = {
    batch_ids: ids,
    agent: options.agent,
    mode: options.mode,
    dataset: datasetPath,
    rows: dataset.rows.length,
    n: options.n,
  };
  const started = Date.now();
  const finish = (status: SubmitStatus, tally: ProgressTally, finishedAtStart = 0) => {
    const summary = summarize({ ...base, status }, tally, Date.now() - started, finishedAtStart);
    out.result(summary, () => formatSubmitSummary(summary));
  };

  if (!options.wait) {
    const tallies: ProgressTally[] = [];
    for (const [k, chunk] of chunks.entries())
      tallies.push(tallyOf(await startChunk(client, out, batchBody(options, ids[k]!, chunk))));
    finish("submitted", addTallies(...tallies));
    return ExitCode.ok;
  }

  const policy = resolveInterruptPolicy(options, Boolean(process.stdin.isTTY));
  const interrupts = new InterruptWatch();
  const view = createProgressView(out);
  const done: ProgressTally[] = [];
  const pending = (from: number) =>
    chunks.slice(from).map((chunk) => emptyTally(chunk.length * options.n));
  let finishedAtStart: number | null = null;
  try {
    for (const [k, chunk] of chunks.entries()) {
      const first = await startChunk(client, out, batchBody(options, ids[k]!, chunk));
      const onProgress = (progress: BatchProgress) => {
        const tally = addTallies(...done, tallyOf(progress), ...pending(k + 1));
        finishedAtStart ??= finishedOf(tally);
        const elapsedMs = Date.now() - started;
        view.update({
          tally,
          elapsedMs,
          ...rateAndEta(finishedOf(tally), finishedAtStart, tally.rollouts, elapsedMs),
        });
      };
      onProgress(first);
      const watched = first.done
        ? { progress: first, interrupted: false }
        : await watchBatch(client, ids[k]!, {
            intervalMs: options.intervalMs,
            signal: interrupts.signal,
            onProgress,
          });
      if (watched.interrupted) {
        view.stop();
        interrupts.dispose();
        const cancelled = await handleInterrupt(client, out, ids[k]!, policy);
        if (k + 1 < chunks.length)
          out.note(`batches ${ids.slice(k + 1).join(", ")} were not submitted`);
        const latest = cancelled ? await readBatch(client, ids[k]!) : watched.progress;
        finish(
          cancelled ? "cancelled" : "left_running",
          addTallies(...done, tallyOf(latest), ...pending(k + 1)),
          finishedAtStart ?? 0,
        );
        return ExitCode.interrupted;
      }
      done.push(tallyOf(watched.progress));
      if (watched.progress.status === "cancelled") {
        view.stop();
        out.note(`batch ${ids[k]} was cancelled (not by this command)`);
        finish("cancelled", addTallies(...done, ...pending(k + 1)), finishedAtStart ?? 0);
        return ExitCode.failure;
      }
    }
    view.stop();
    finish("completed", addTallies(...done), finishedAtStart ?? 0);
    return ExitCode.ok;
  } finally {
    view.stop();
    interrupts.dispose();
  }
}
