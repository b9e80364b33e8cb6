/**
 * Integration: the staleness rule while rollouts run and its refills. A rollout that a newer policy
 * version leaves untrainable ends STALE with its group (`cancelled`); a group the feed drops as
 * stale at pull time is refilled from the batch's reserve rows (reopening a batch that met its
 * target) within its `refill_budget`; an `on_stale: "wait"` batch holds new rollouts until the
 * trainer pulled its ready groups. Every test ends the syncs it begins (policy versions only grow).
 */
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { BatchProgress } from "../../../../src/schemas/batch";
import type { FeedGroup, PullResponse } from "../../../../src/schemas/feed";
import { getBatch, postBatch, waitForBatch } from "../../../fixtures/datasets/batch-api";
import { getRollout, uniqueId, waitFor, waitForEnd } from "../../../fixtures/rollouts";
import "../../../fixtures/test-agents";
import { bumpPolicyVersion, expectProblem, postJson } from "../../fixtures/feed-fixtures";

const tracker = (batchId: string) => env.BATCH_TRACKER.get(env.BATCH_TRACKER.idFromName(batchId));

/** A `test-loop` row: done after `done_after` steps, each sleeping `step_sleep_ms` after its model call. */
function loopRow(index: number, done_after: number, step_sleep_ms = 0) {
  return {
    prompt: `Staleness test ${index}.`,
    reward_model: { ground_truth: null },
    extra_info: { index },
    done_after,
    step_sleep_ms,
  };
}

async function pull(batchId: string): Promise<PullResponse<FeedGroup>> {
  const response = await postJson("/v1/feed/pull", { max_groups: 16, batch_id: batchId });
  expect(response.status).toBe(200);
  const pulled = (await response.json()) as PullResponse<FeedGroup>;
  if (pulled.lease_id) await postJson("/v1/feed/ack", { lease_id: pulled.lease_id });
  return pulled;
}

function waitForProgress(
  batchId: string,
  what: string,
  ok: (progress: BatchProgress) => boolean,
  timeoutMs = 20_000,
): Promise<BatchProgress> {
  return waitFor(
    what,
    async () => {
      const progress = await getBatch(batchId);
      return ok(progress) ? progress : undefined;
    },
    timeoutMs,
  );
}

/** Waits until rollout `rolloutId` has committed a model call (its oldest token's version is known). */
function waitForCall(rolloutId: string): Promise<unknown> {
  return waitFor(`${rolloutId} to make a call`, async () =>
    (await getRollout(rolloutId).catch(() => undefined))?.usage.llm_calls ? true : undefined,
  );
}

describe("staleness while rollouts run, and refills", () => {
  it("ends a running rollout the new version leaves untrainable, with its group, and refills its slot at once", async () => {
    const batchId = uniqueId("stale-run");
    const response = await postBatch({
      batch_id: batchId,
      agent: "test-loop",
      rows: [loopRow(0, 200, 40), loopRow(1, 1)],
      n: 2,
      max_concurrent: 2,
      training_mode: "async/0",
      target_groups: 1,
    });
    expect(response.status).toBe(202);
    await waitForCall(`${batchId}:0:0`);
    await bumpPolicyVersion();
    const ended = await waitForEnd(`${batchId}:0:0`);
    expect(ended).toMatchObject({ status: "cancelled", termination_reason: "STALE" });
    expect(ended.error).toMatch(/could no longer be trained/);
    // Far from its 200 steps: it stopped when the version moved, not at its end.
    expect(ended.usage.llm_calls).toBeLessThan(50);
    const final = await waitForBatch(batchId, 20_000);
    expect(final).toMatchObject({
      released: 4,
      groups: { delivered: 1, target: 1 },
      refill: { cancelled: 1, stale: 0, refilled: 1, unreplaced: 0 },
    });
    expect((await tracker(batchId).groupVerdict(0))?.verdict).toBe("cancelled");
    // Pulls until the feed reported both groups: row 1 delivered, row 0 dropped as cancelled.
    const delivered: string[] = [];
    const dropped = await waitFor("the feed to report both groups", async () => {
      const page = await pull(batchId);
      delivered.push(...page.groups.map((group) => group.uid));
      return delivered.length > 0 && page.dropped_groups.length > 0
        ? page.dropped_groups
        : undefined;
    });
    expect(delivered).toEqual([`${batchId}:1`]);
    expect(dropped).toEqual([
      expect.objectContaining({ uid: `${batchId}:0`, reason: "cancelled" }),
    ]);
  }, 40_000);

  it("refills a group the feed dropped as stale when pulled, reopening a batch that had met its target", async () => {
    const batchId = uniqueId("stale-pull");
    expect(
      (
        await postBatch({
          batch_id: batchId,
          agent: "test-loop",
          // One rollout at a time: row 0 meets the target alone, rows 1 and 2 are the reserve.
          rows: [loopRow(0, 1), loopRow(1, 1), loopRow(2, 1)],
          n: 1,
          max_concurrent: 1,
          training_mode: "async/0",
          target_groups: 1,
        })
      ).status,
    ).toBe(202);
    expect(await waitForBatch(batchId)).toMatchObject({ released: 1, groups: { delivered: 1 } });
    await bumpPolicyVersion();
    const pulled = await pull(batchId);
    expect(pulled.groups).toEqual([]);
    expect(pulled.dropped_groups).toEqual([
      expect.objectContaining({ uid: `${batchId}:0`, reason: "stale" }),
    ]);
    const refilled = await waitForProgress(
      batchId,
      "the stale group to be refilled",
      (p) => p.done && p.refill.refilled === 1,
    );
    expect(refilled).toMatchObject({
      released: 2,
      refill: { stale: 1, cancelled: 0, refilled: 1, unreplaced: 0, budget: 16 },
    });
    const again = await waitFor("the refilled group", async () => {
      const page = await pull(batchId);
      return page.groups.length > 0 ? page : undefined;
    });
    expect(again.groups.map((group) => group.uid)).toEqual([`${batchId}:1`]);
  }, 40_000);

  it("ends short once its refill budget is spent, and says so", async () => {
    const batchId = uniqueId("stale-budget");
    expect(
      (
        await postBatch({
          batch_id: batchId,
          agent: "test-loop",
          rows: [loopRow(0, 1), loopRow(1, 1)],
          n: 1,
          max_concurrent: 1,
          training_mode: "async/0",
          target_groups: 1,
          refill_budget: 0,
        })
      ).status,
    ).toBe(202);
    await waitForBatch(batchId);
    await bumpPolicyVersion();
    expect((await pull(batchId)).dropped_groups).toHaveLength(1);
    const short = await waitForProgress(
      batchId,
      "the drop to be counted",
      (p) => p.refill.stale > 0,
    );
    expect(short).toMatchObject({
      done: true,
      released: 1,
      refill: { stale: 1, refilled: 0, unreplaced: 1, budget: 0 },
    });
  }, 30_000);

  it("with on_stale wait, holds new rollouts until the trainer pulled the batch's ready groups", async () => {
    const batchId = uniqueId("stale-wait");
    expect(
      (
        await postBatch({
          batch_id: batchId,
          agent: "test-loop",
          // Row 0 ends at once (its freed place releases row 2); rows 1 and 2 run until the version moves.
          rows: [
            loopRow(0, 1),
            loopRow(1, 200, 40),
            loopRow(2, 200, 40),
            loopRow(3, 1),
            loopRow(4, 1),
          ],
          n: 1,
          max_concurrent: 2,
          training_mode: "async/0",
          target_groups: 2,
          on_stale: "wait",
        })
      ).status,
    ).toBe(202);
    await waitForEnd(`${batchId}:0:0`);
    await waitForCall(`${batchId}:1:0`);
    await waitForCall(`${batchId}:2:0`);
    await bumpPolicyVersion();
    const holding = await waitForProgress(
      batchId,
      "the batch to hold",
      (p) => p.refill.cancelled === 2 && p.in_flight === 0,
    );
    expect(holding.refill.holding_since).not.toBeNull();
    expect(holding.released).toBe(3);
    // Row 0's group waits in the feed, ready and unpulled: the tracker's tick keeps holding.
    expect(await runDurableObjectAlarm(tracker(batchId))).toBe(true);
    expect(await getBatch(batchId)).toMatchObject({
      released: 3,
      refill: { holding_since: holding.refill.holding_since },
    });
    // The trainer pulls: row 0's group is stale by now (dropped, refilled); nothing is left ready.
    expect((await pull(batchId)).dropped_groups.map((g) => g.reason).sort()).toEqual([
      "cancelled",
      "cancelled",
      "stale",
    ]);
    await waitForProgress(batchId, "the stale drop to be counted", (p) => p.refill.stale === 1);
    expect(await runDurableObjectAlarm(tracker(batchId))).toBe(true);
    expect(await waitForBatch(batchId, 20_000)).toMatchObject({
      released: 5,
      groups: { delivered: 3 },
      refill: { cancelled: 2, stale: 1, refilled: 3, holding_since: null },
    });
  }, 45_000);

  it("refuses an unknown on_stale and a refill_budget out of range, naming the field", async () => {
    const base = { agent: "test-loop", rows: [loopRow(0, 1)], n: 1 };
    const wrong = await expectProblem(await postBatch({ ...base, on_stale: "later" }), 422);
    expect(wrong.errors).toEqual([expect.objectContaining({ path: "on_stale" })]);
    const budget = await expectProblem(await postBatch({ ...base, refill_budget: -1 }), 422);
    expect(budget.errors).toEqual([
      expect.objectContaining({ path: "refill_budget", message: "refill_budget must be >= 0" }),
    ]);
  });
});
