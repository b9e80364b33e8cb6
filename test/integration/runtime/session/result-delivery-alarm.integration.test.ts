/**
 * Integration: a published result's delivery on the real RolloutSession object: confirmed by the
 * results consumer when it puts the result into the feed, else re-checked by the object's own
 * alarm, asked through the results queue and answered by the real consumer, which asks each feed
 * shard once per batch of checks (result-delivery.integration.test.ts runs the same check on a kernel
 * whose setAlarm does nothing, so it cannot see whether the object ever wakes up for it).
 */
import { objects } from "../../../../src/runtime/objects/object-directory";
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { patchState, readState } from "../../../fixtures/hand-session";
import { api, postRollout, uniqueId, waitFor } from "../../../fixtures/rollouts";

const objectOf = (rolloutId: string) =>
  env.ROLLOUT_SESSION.get(env.ROLLOUT_SESSION.idFromName(rolloutId));
const alarmOf = (rolloutId: string) =>
  runInDurableObject(objectOf(rolloutId), (_instance, state) => state.storage.getAlarm());

/** Creates an external rollout as member `index` of a `size`-member train group and finishes it with reward 1. */
async function finishedTrainRollout(rolloutId: string, uid: string, index: number, size: number) {
  const group = {
    uid,
    sample_index: index,
    group_size: size,
    batch_id: null,
    training_mode: "async",
    data_manager: "train",
  };
  const created = await postRollout({
    agent: "external",
    rollout_id: rolloutId,
    task: { problem: "p" },
    group,
  });
  expect(created.status).toBe(202);
  const finished = await api(`/v1/rollouts/${rolloutId}/finish`, {
    method: "POST",
    body: JSON.stringify({ reward: 1 }),
  });
  expect(finished.status).toBe(200);
}

/** The rollout's publication once its delivery is confirmed (waited for as `what`). */
function confirmedDelivery(rolloutId: string, what: string) {
  return waitFor(what, async () => {
    const publication = (await readState(rolloutId)).publication;
    return publication.delivery?.confirmed_at ? publication : undefined;
  });
}

/** Makes the session's delivery unconfirmed again, its next check due at `nextCheckAt`: as if the consumer had not told it. */
function unconfirmed(rolloutId: string, nextCheckAt: number): Promise<void> {
  return patchState(rolloutId, (state) => ({
    ...state,
    publication: {
      ...state.publication,
      delivery: { ...state.publication.delivery!, next_check_at: nextCheckAt, confirmed_at: null },
    },
  }));
}

describe("the delivery re-check on the real session object", () => {
  it("confirms a result the feed took at once, with no check; an unconfirmed one is checked by the object's own alarm", async () => {
    const rolloutId = uniqueId("delivery-alarm");
    await finishedTrainRollout(rolloutId, `${rolloutId}-g`, 0, 1);

    // The consumer that put the result into the feed tells the session: confirmed without a
    // check, and the object no longer wakes up for one (its alarm was set for the first check).
    const confirmed = await confirmedDelivery(rolloutId, "the delivery confirmed by the consumer");
    expect(confirmed.delivery).toMatchObject({ checks: 0, next_check_at: null, gave_up: false });
    expect(await objects(env).feedShard().holds(rolloutId)).toBe(true);
    expect(await alarmOf(rolloutId)).toBeNull();

    // A session the consumer could not tell checks by itself: its check due, its alarm (run now
    // rather than in a minute) asks through the queue, and the consumer's answer (the feed holds
    // it) confirms it.
    await unconfirmed(rolloutId, Date.now() - 1);
    await runInDurableObject(objectOf(rolloutId), (_instance, state) =>
      state.storage.setAlarm(Date.now() + 60_000),
    );
    expect(await runDurableObjectAlarm(objectOf(rolloutId))).toBe(true);
    const after = await confirmedDelivery(rolloutId, "the delivery confirmed by the check");
    expect(after.delivery).toMatchObject({ checks: 1, next_check_at: null, gave_up: false });
    expect(after.attempts).toBe(confirmed.attempts);
    expect(await alarmOf(rolloutId)).toBeNull();
  });

  it("answers a batch of sessions' checks with one holdsMany per feed shard, never one holds per rollout", async () => {
    const ids = Array.from({ length: 8 }, () => uniqueId("delivery-batch"));
    for (const [i, rolloutId] of ids.entries())
      await finishedTrainRollout(rolloutId, `${ids[0]}-g`, i, ids.length);
    for (const rolloutId of ids)
      await waitFor("the result in the feed", async () =>
        (await objects(env).feedShard().holds(rolloutId)) ? true : undefined,
      );
    // As if the consumer had not confirmed them when it took them: each session waits for a check.
    for (const rolloutId of ids) {
      await confirmedDelivery(rolloutId, "the delivery confirmed by the consumer");
      await unconfirmed(rolloutId, Date.now() + 60_000);
    }
    const before = await feedRequests();
    // As the sessions' alarms would send them, but at once: they reach the consumer in one batch.
    await env.ROLLOUT_RESULTS.sendBatch(
      ids.map((rolloutId) => ({
        body: { kind: "delivery_check", rollout_id: rolloutId, uid: `${ids[0]}-g` },
      })),
    );
    for (const rolloutId of ids) {
      await confirmedDelivery(rolloutId, "the confirmed delivery");
    }
    const after = await feedRequests();
    expect(after.holds - before.holds).toBe(0);
    expect(after.holdsMany - before.holdsMany).toBe(1);
  });
});

/** The feed shards' `holds` and `holdsMany` requests so far, summed (their own counters). */
async function feedRequests(): Promise<{ holds: number; holdsMany: number }> {
  const { shards } = (await (await api("/v1/feed/requests")).json()) as {
    shards: Array<{ by_method: Record<string, number> }>;
  };
  const sum = (method: string) =>
    shards.reduce((n, shard) => n + (shard.by_method[method] ?? 0), 0);
  return { holds: sum("holds"), holdsMany: sum("holdsMany") };
}
