/** Integration: the tracker's alarm resumes an interrupted fan-out and reads back results that never arrived. */
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BatchStorage, type RolloutOutcome } from "../../../../src/runtime/batch/batch-storage";
import { FanOut } from "../../../../src/runtime/batch/fan-out";
import { BATCH_RECORD_SCHEMA_VERSION, slotAt } from "../../../../src/runtime/batch/batch-state";
import { rowToTask, type RowTask } from "../../../../src/runtime/batch/row-task";
import { DatasetRow } from "../../../../src/schemas/batch";
import { RolloutConfig } from "../../../../src/schemas/rollout-config";
import {
  batchRollouts,
  calculatorRows,
  getBatch,
  postBatch,
  waitForBatch,
} from "../../../fixtures/datasets/batch-api";
import { api, uniqueId } from "../../../fixtures/rollouts";
import "../../../fixtures/signal-agents";

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
    const tasks = calculatorRows()
      .slice(0, 2)
      .map(
        (row, index) =>
          rowToTask(DatasetRow.parse(row), index, "calculator") as { ok: true } & RowTask,
      );
    const now = Date.now();
    await inTracker(batchId, (storage) => {
      storage.migrate();
      storage.insertRows(tasks);
      storage.writeBatch({
        schema_version: BATCH_RECORD_SCHEMA_VERSION,
        batch_id: batchId,
        fingerprint: "0".repeat(64),
        agent: "calculator",
        mode: "train",
        n: 2,
        config: RolloutConfig.parse({}),
        training_mode: "verl/hybrid",
        data_manager: "train",
        max_concurrent: 4,
        dataset_key: null,
        rows: 2,
        total: 4,
        next_index: 4,
        cancelled_at: null,
        created_at: now,
        updated_at: now,
        finished_at: null,
      });
      // The reservation committed; the process died before any session was created.
      storage.insertReleased(
        [0, 1, 2, 3].map((k) => slotAt({ batch_id: batchId, n: 2 }, k)),
        now,
      );
    });
    expect((await api(`/v1/rollouts/${batchId}:1:1`)).status).toBe(404);
    expect(await runDurableObjectAlarm(tracker(batchId))).toBe(true);
    expect(await waitForBatch(batchId)).toMatchObject({
      done: true,
      released: 4,
      counts: { succeeded: 4 },
    });
  });

  it("reads a rollout's outcome back from its session when its result message was lost", async () => {
    const batchId = uniqueId("lost-result");
    expect(
      (
        await postBatch({
          batch_id: batchId,
          agent: "calculator",
          rows: calculatorRows().slice(0, 1),
          n: 2,
        })
      ).status,
    ).toBe(202);
    const before = await waitForBatch(batchId);
    await runInDurableObject(tracker(batchId), async (_instance, state) => {
      // As if the result of sample 1 had gone to the dead-letter queue: still live, ended long ago.
      state.storage.sql.exec(
        `UPDATE rollouts SET status = 'running', termination_reason = NULL, reward = NULL, terminal_seen_at = ? WHERE sample_index = 1`,
        Date.now() - 120_000,
      );
      const storage = new BatchStorage(state.storage.sql);
      storage.writeBatch({ ...storage.readBatch()!, finished_at: null });
      await state.storage.setAlarm(Date.now() + 60_000);
    });
    expect(await getBatch(batchId)).toMatchObject({ done: false, in_flight: 1 });
    expect(await runDurableObjectAlarm(tracker(batchId))).toBe(true);
    const after = await getBatch(batchId);
    expect(after).toMatchObject({
      done: true,
      counts: before.counts,
      termination_reasons: before.termination_reasons,
      reward: before.reward,
    });
  });

  it("re-runs a slot whose infrastructure failure it only read back (its result message lost in a crash)", async () => {
    const batchId = uniqueId("lost-infra");
    const row = {
      prompt: "Lost infra.",
      reward_model: { ground_truth: null },
      extra_info: { index: 0 },
      run_key: uniqueId("k"),
      fail_runs: { 1: 1 },
    };
    expect(
      (await postBatch({ batch_id: batchId, agent: "test-signal", rows: [row], n: 2 })).status,
    ).toBe(202);
    const before = await waitForBatch(batchId, 30_000);
    expect(before).toMatchObject({ done: true, retried: 1, groups: { delivered: 1 } });
    const [failed, rerun] = [`${batchId}:0:1`, `${batchId}:0:1.retry-1`];
    await runInDurableObject(tracker(batchId), async (_instance, state) => {
      // As if the queue lost the failed run's message before the tracker saw it: live, ended long
      // ago, never superseded, its re-run never released (the re-run's session stays, finished).
      state.storage.sql.exec(
        `UPDATE rollouts SET status = 'running', termination_reason = NULL, reward = NULL, outcome = NULL, superseded = 0, terminal_seen_at = ? WHERE rollout_id = ?`,
        Date.now() - 120_000,
        failed,
      );
      state.storage.sql.exec(`DELETE FROM rollouts WHERE rollout_id = ?`, rerun);
      state.storage.sql.exec(`DELETE FROM group_verdicts`);
      const storage = new BatchStorage(state.storage.sql);
      storage.writeBatch({ ...storage.readBatch()!, finished_at: null });
      await state.storage.setAlarm(Date.now() + 60_000);
    });
    expect(await runDurableObjectAlarm(tracker(batchId))).toBe(true);
    // Read back as what its message said: an infrastructure failure whose slot is re-run.
    const listed = await batchRollouts(batchId);
    expect(listed.map((entry) => [entry.rollout_id, entry.superseded, entry.outcome])).toEqual(
      expect.arrayContaining([[failed, true, "infra"]]),
    );
    expect(listed.map((entry) => entry.rollout_id)).toContain(rerun);
    // The re-run had ended already; its result is read back once overdue, and the group judged.
    await runInDurableObject(tracker(batchId), async (_instance, state) => {
      state.storage.sql.exec(
        `UPDATE rollouts SET terminal_seen_at = ? WHERE rollout_id = ? AND status IN ('queued', 'running')`,
        Date.now() - 120_000,
        rerun,
      );
      await state.storage.setAlarm(Date.now() + 60_000);
    });
    expect(await runDurableObjectAlarm(tracker(batchId))).toBe(true);
    expect(await getBatch(batchId)).toMatchObject({
      done: true,
      retried: 1,
      counts: before.counts,
      groups: { delivered: 1, withheld: 0 },
    });
    expect(
      (await batchRollouts(batchId)).find((entry) => entry.rollout_id === rerun),
    ).toMatchObject({ superseded: false, outcome: "policy" });
  }, 40_000);
  it("acts on each read-back outcome as it is recorded, not after every session answered", async () => {
    const batchId = uniqueId("settle-order");
    const [first, second] = [
      slotAt({ batch_id: batchId, n: 2 }, 0),
      slotAt({ batch_id: batchId, n: 2 }, 1),
    ];
    const ended: RolloutOutcome = {
      status: "succeeded",
      termination_reason: "ENV_DONE",
      reward: 1,
      outcome: "policy",
    };
    await runInDurableObject(tracker(batchId), async (_instance, state) => {
      const storage = new BatchStorage(state.storage.sql);
      storage.migrate();
      const longAgo = Date.now() - 120_000;
      storage.insertReleased([first, second], longAgo);
      for (const slot of [first, second]) storage.markTerminalSeen(slot.rollout_id, longAgo);
      const events: string[] = [];
      let answerSecond: (() => void) | undefined;
      const secondAsked = new Promise<void>((resolve) => (answerSecond = resolve));
      const fanOut = new FanOut({
        storage,
        transactionSync: (fn) => state.storage.transactionSync(fn),
        results: { send: async () => {} },
        definition: () => undefined,
        now: Date.now,
        sessions: {
          create: async () => {
            throw new Error("not used");
          },
          cancel: async () => {
            throw new Error("not used");
          },
          forkSource: async () => {
            throw new Error("not used");
          },
          createFork: async () => {
            throw new Error("not used");
          },
          // The second session answers only once the first outcome was acted on (or after 2 s, as the old order would need).
          outcome: async (rolloutId) => {
            if (rolloutId === second.rollout_id)
              await Promise.race([
                secondAsked,
                new Promise((resolve) => setTimeout(resolve, 2_000)),
              ]);
            events.push(`answered ${rolloutId}`);
            return ended;
          },
        },
      });
      const settled = await fanOut.readBack(Date.now(), 10, async (slot) => {
        // Recorded in the same synchronous stretch: a crash after this point cannot lose the action.
        expect(storage.listOverdue(Date.now(), 10).map((live) => live.rollout_id)).not.toContain(
          slot.rollout_id,
        );
        events.push(`settled ${slot.rollout_id}`);
        answerSecond!();
      });
      expect(settled).toBe(2);
      expect(events).toEqual([
        `answered ${first.rollout_id}`,
        `settled ${first.rollout_id}`,
        `answered ${second.rollout_id}`,
        `settled ${second.rollout_id}`,
      ]);
    });
  });
});
