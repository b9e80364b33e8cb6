/** Integration: where a batch's rows come from — a producer's queue message, a JSONL or a parquet dataset in R2. */
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../../../functions/worker";
import type { BatchMessageInput } from "../../../../src/schemas/batch";
import {
  CALCULATOR_JSONL,
  batchRollouts,
  calculatorParquet,
  calculatorRows,
  getBatch,
  postBatch,
  waitForBatch,
} from "../../../fixtures/datasets/batch-api";
import { api, getRollout, uniqueId, waitFor } from "../../../fixtures/rollouts";

/** Delivers `bodies` to the Worker's batch-queue handler as one batch and returns what it acked and retried. */
async function deliver(bodies: unknown[]) {
  const batch = createMessageBatch(
    "edge-rollout-batches",
    bodies.map((body, i) => ({ id: `msg-${i}`, timestamp: new Date(), attempts: 1, body })),
  );
  await worker.queue(batch as MessageBatch<unknown>, env);
  return getQueueResult(batch, createExecutionContext());
}

afterEach(() => vi.restoreAllMocks());

describe("batch sources", () => {
  it("starts a batch from a producer's message put directly on ROLLOUT_BATCHES", async () => {
    const message: BatchMessageInput = {
      batch_id: uniqueId("queued-batch"),
      agent: "calculator",
      rows: calculatorRows().slice(0, 3),
      n: 2,
    };
    await env.ROLLOUT_BATCHES.send(message);
    await waitFor("the batch to exist", async () =>
      (await api(`/v1/batches/${message.batch_id}`)).status === 200 ? true : undefined,
    );
    const final = await waitForBatch(message.batch_id);
    expect(final).toMatchObject({
      rows: 3,
      n: 2,
      rollouts: 6,
      done: true,
      counts: { succeeded: 6 },
    });
  });

  it("runs the first `limit` rows of a JSONL dataset in R2, as a val batch", async () => {
    await env.TRAJECTORIES.put("datasets/calculator.jsonl", CALCULATOR_JSONL);
    const batchId = uniqueId("jsonl-batch");
    const response = await postBatch({
      batch_id: batchId,
      agent: "calculator",
      dataset_key: "datasets/calculator.jsonl",
      limit: 3,
      n: 2,
      mode: "val",
    });
    expect(response.status).toBe(202);
    expect(await response.json()).toMatchObject({ batch_id: batchId, rollouts: 6 });
    expect(await waitForBatch(batchId)).toMatchObject({
      done: true,
      counts: { succeeded: 6 },
      mode: "val",
      data_manager: "infer",
      dataset_key: "datasets/calculator.jsonl",
    });
    const view = await getRollout(`${batchId}:2:1`);
    expect(view.trajectory.task).toMatchObject({
      problem: "Use the calculator to compute 12 * 12 - 7.",
      ground_truth: "137",
    });
    expect(view.config.mode).toBe("val");
  });

  it("runs the rows of a parquet dataset in R2 (hyparquet inside workerd)", async () => {
    await env.TRAJECTORIES.put("datasets/calculator.parquet", calculatorParquet());
    const batchId = uniqueId("parquet-batch");
    const response = await postBatch({
      batch_id: batchId,
      agent: "calculator",
      dataset_key: "datasets/calculator.parquet",
      n: 1,
    });
    expect(response.status).toBe(202);
    expect(await waitForBatch(batchId)).toMatchObject({
      rows: 16,
      rollouts: 16,
      done: true,
      counts: { succeeded: 16 },
    });
    const task = (await getRollout(`${batchId}:3:0`)).trajectory.task;
    expect(task).toMatchObject({
      problem: "Use the calculator to compute 45 + 67 - 18.",
      ground_truth: "94",
      task_id: "3",
    });
    expect(task.extra_args).toMatchObject({
      data_source: "edge-rollout/calculator",
      extra_info: { index: 3, split: "train" },
    });
    expect((await batchRollouts(batchId)).map((entry) => entry.uid)).toEqual(
      Array.from({ length: 16 }, (_, row) => `${batchId}:${row}`),
    );
  });

  it("acks a malformed or invalid batch message and logs it, and starts a valid one once", async () => {
    const errorLog = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const valid = {
      batch_id: uniqueId("direct-batch"),
      agent: "calculator",
      rows: calculatorRows().slice(0, 1),
      n: 1,
    };
    const result = await deliver([
      { agent: "calculator" },
      { ...valid, batch_id: uniqueId("bad-rows"), rows: [{ prompt: [] }] },
      valid,
      valid,
    ]);
    expect(result.explicitAcks.sort()).toEqual(["msg-0", "msg-1", "msg-2", "msg-3"]);
    expect(result.retryMessages).toEqual([]);
    expect(errorLog).toHaveBeenCalledWith(
      "dropping malformed batch message",
      expect.objectContaining({ id: "msg-0" }),
    );
    expect(await getBatch(valid.batch_id)).toMatchObject({ rollouts: 1, released: 1 });
  });
});
