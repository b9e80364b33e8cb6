/** Integration: the tracker's alarm resumes an interrupted fan-out and reads back results that never arrived. */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BatchStorage } from "../../src/runtime/batch/batch-storage";
import { BATCH_RECORD_SCHEMA_VERSION, slotAt } from "../../src/runtime/batch/batch-state";
import { rowToTask, type RowTask } from "../../src/runtime/batch/row-task";
import { DatasetRow } from "../../src/schemas/batch";
import { RolloutConfig } from "../../src/schemas/rollout-config";
import { calculatorRows, getBatch, postBatch, waitForBatch } from "../fixtures/datasets/batch-api";
import { api, uniqueId } from "../fixtures/rollouts";

const tracker = (batchId: string) => env.BATCH_TRACKER.get(env.BATCH_TRACKER.idFromName(batchId));

/** Runs `fn` over the tracker's tables inside the object, then arms its alarm so a test can run it. */
function inTracker(batchId: string, fn: (storage: BatchStorage) => void): Promise<void> {
  return runInDurableObject(tracker(batchId), async (_instance, state) => {
    fn(new BatchStorage(state.storage.sql));
    await state.storage.setAlarm(Date.now() + 60_000);
  });
}

describe("the batch tracker's alarm", () => {
  it("creates rollouts whose slots were reserved before a crash, and finishes the batch", async () => {
    const batchId = uniqueId("crashed");
    const tasks = calculatorRows().slice(0, 2).map((row, index) => rowToTask(DatasetRow.parse(row), index, "calculator") as { ok: true } & RowTask);
    const now = Date.now();
    await inTracker(batchId, (storage) => {
      storage.migrate();
      storage.insertRows(tasks);
      storage.writeBatch({
        schema_version: BATCH_RECORD_SCHEMA_VERSION, batch_id: batchId, fingerprint: "0".repeat(64), agent: "calculator", mode: "train", n: 2,
        config: RolloutConfig.parse({}), training_mode: "verl/hybrid", data_manager: "train", max_concurrent: 4, dataset_key: null,
        rows: 2, total: 4, next_index: 4, cancelled_at: null, created_at: now, updated_at: now, finished_at: null,
      });
      // The reservation committed; the process died before any session was created.
      storage.insertReleased([0, 1, 2, 3].map((k) => slotAt({ batch_id: batchId, n: 2 }, k)), now);
    });
    expect((await api(`/v1/rollouts/${batchId}:1:1`)).status).toBe(404);
    expect(await runDurableObjectAlarm(tracker(batchId))).toBe(true);
    expect(await waitForBatch(batchId)).toMatchObject({ done: true, released: 4, counts: { succeeded: 4 } });
  });

  it("reads a rollout's outcome back from its session when its result message was lost", async () => {
    const batchId = uniqueId("lost-result");
    expect((await postBatch({ batch_id: batchId, agent: "calculator", rows: calculatorRows().slice(0, 1), n: 2 })).status).toBe(202);
    const before = await waitForBatch(batchId);
    await runInDurableObject(tracker(batchId), async (_instance, state) => {
      // As if the result of sample 1 had gone to the dead-letter queue: still live, ended long ago.
      state.storage.sql.exec(`UPDATE rollouts SET status = 'running', termination_reason = NULL, reward = NULL, terminal_seen_at = ? WHERE sample_index = 1`, Date.now() - 120_000);
      const storage = new BatchStorage(state.storage.sql);
      storage.writeBatch({ ...storage.readBatch()!, finished_at: null });
      await state.storage.setAlarm(Date.now() + 60_000);
    });
    expect(await getBatch(batchId)).toMatchObject({ done: false, in_flight: 1 });
    expect(await runDurableObjectAlarm(tracker(batchId))).toBe(true);
    const after = await getBatch(batchId);
    expect(after).toMatchObject({ done: true, counts: before.counts, termination_reasons: before.termination_reasons, reward: before.reward });
  });
});
