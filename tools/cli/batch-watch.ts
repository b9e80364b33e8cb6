/** @module Following one batch: poll `GET /v1/batches/:id` until it is done or the user interrupts. */
import type { BatchProgress } from "../../src/schemas/batch";
import type { ApiClient } from "./api-client";
import { UnreachableError } from "./errors";
import { sleep } from "./interrupt";

/** How to follow a batch. */
export interface WatchOptions {
  /** Time between polls. */
  intervalMs: number;
  /** Aborting stops the watch after the current poll (Ctrl-C). */
  signal: AbortSignal;
  /** Called with every progress read. */
  onProgress: (progress: BatchProgress) => void;
  /** How long the server may stay unreachable before the watch gives up. Default 30 000 ms. */
  patienceMs?: number;
}

/** How a watch ended: the batch finished (`done`), or the signal stopped it first. */
export interface WatchResult {
  progress: BatchProgress;
  interrupted: boolean;
}

/** `GET /v1/batches/:id`. */
export function readBatch(client: ApiClient, batchId: string): Promise<BatchProgress> {
  return client.get<BatchProgress>(`/v1/batches/${encodeURIComponent(batchId)}`);
}

/**
 * Polls until the batch is done (completed or cancelled) or `signal` aborts. A server that stops
 * answering is retried for `patienceMs` (a restarting stack, a network blip) before the
 * UnreachableError is thrown.
 */
export async function watchBatch(
  client: ApiClient,
  batchId: string,
  options: WatchOptions,
): Promise<WatchResult> {
  const patienceMs = options.patienceMs ?? 30_000;
  let last: BatchProgress | undefined;
  let unreachableSince: number | null = null;
  for (;;) {
    try {
      last = await readBatch(client, batchId);
      unreachableSince = null;
      options.onProgress(last);
      if (last.done) return { progress: last, interrupted: false };
    } catch (error) {
      if (!(error instanceof UnreachableError)) throw error;
      unreachableSince ??= Date.now();
      if (Date.now() - unreachableSince > patienceMs) throw error;
    }
    if (options.signal.aborted && last) return { progress: last, interrupted: true };
    await sleep(options.intervalMs, options.signal);
    if (options.signal.aborted && last) return { progress: last, interrupted: true };
  }
}
