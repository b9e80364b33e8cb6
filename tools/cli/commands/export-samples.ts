/**
 * @module `edge-rollout export --batch ID --format parquet --out FILE.parquet`: every training
 * sample of a batch's finished rollouts as one parquet file.
 */
import { writeFileSync } from "node:fs";
import { eachLimited } from "../../../src/runtime/each-limited";
import { MAX_LIST_LIMIT, type RolloutListPage } from "../../../src/schemas/batch-listing";
import type { TrainingSample } from "../../../src/schemas/training-sample";
import { buildSamplesForView } from "../../../src/training/sample-builder";
import type { ApiClient } from "../api-client";
import { OperationError } from "../errors";
import type { Output } from "../output";
import { samplesToParquet } from "../samples-parquet";
import { readRollout } from "./show";

/** Rollout views read at once: enough to hide round trips, few enough not to crowd the Worker. */
const READ_CONCURRENCY = 8;
const FINISHED = new Set(["succeeded", "failed", "cancelled"]);

/**
 * Lists the batch's rollouts page by page, reads each finished one's view and cuts its samples
 * with the sink's own sample builder (the published records have no HTTP route; for a published
 * rollout the samples equal its record's, failed ones flagged), then writes them, ordered by row,
 * sample index and segment, as parquet.
 */
export async function runExportSamples(
  batchId: string,
  options: { out: string },
  client: ApiClient,
  out: Output,
): Promise<0> {
  const entries: RolloutListPage["rollouts"] = [];
  for (let offset = 0; ; offset += MAX_LIST_LIMIT) {
    const page = await client.get<RolloutListPage>(
      `/v1/batches/${encodeURIComponent(batchId)}/rollouts?offset=${offset}&limit=${MAX_LIST_LIMIT}`,
    );
    entries.push(...page.rollouts);
    if (page.rollouts.length === 0 || offset + page.rollouts.length >= page.total) break;
  }
  const finished = entries
    .filter((entry) => FINISHED.has(entry.status))
    .sort((a, b) => a.row_index - b.row_index || a.sample_index - b.sample_index);
  const perRollout: TrainingSample[][] = new Array(finished.length);
  await eachLimited(
    finished.map((entry, i) => ({ entry, i })),
    READ_CONCURRENCY,
    async ({ entry, i }) => {
      const view = await readRollout(client, entry.rollout_id);
      perRollout[i] = buildSamplesForView(view, {
        uid: entry.uid,
        sample_index: entry.sample_index,
      }).samples;
    },
  );
  const samples = perRollout.flat();
  const bytes = samplesToParquet(samples);
  try {
    writeFileSync(options.out, new Uint8Array(bytes));
  } catch (error) {
    throw new OperationError(
      `cannot write ${options.out}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const summary = {
    ok: true,
    batch_id: batchId,
    format: "parquet",
    path: options.out,
    rollouts: finished.length,
    unfinished: entries.length - finished.length,
    samples: samples.length,
    bytes: bytes.byteLength,
  };
  out.result(
    summary,
    () =>
      `wrote ${samples.length} samples of ${finished.length} finished rollouts of ${batchId} to ${options.out} (${bytes.byteLength} bytes)${summary.unfinished ? `; ${summary.unfinished} rollouts not finished yet were left out` : ""}`,
  );
  return 0;
}
