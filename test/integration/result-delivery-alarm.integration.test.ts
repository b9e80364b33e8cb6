/**
 * Integration: the delivery re-check on the real RolloutSession object, driven by its own alarm,
 * asked through the results queue and answered by the real consumer, which asks each feed shard
 * once per batch of checks (result-delivery.integration.test.ts runs the same check on a kernel
 * whose setAlarm does nothing, so it cannot see whether the object ever wakes up for it).
 */
import { objects } from "../../src/runtime/objects/object-directory";
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DELIVERY_CHECK_DELAYS_MS } from "../../src/runtime/session/result-delivery";
import { patchState, readState } from "../fixtures/hand-session";
import { api, postRollout, uniqueId, waitFor } from "../fixtures/rollouts";

const objectOf = (rolloutId: string) =>
  env.ROLLOUT_SESSION.get(env.ROLLOUT_SESSION.idFromName(rolloutId));
const alarmOf = (rolloutId: string) =>
  runInDurableObject(objectOf(rolloutId), (_instance, state) => state.storage.getAlarm());

describe("the delivery re-check on the real session object", () => {
  it("arms the object's alarm for the first check when it publishes, and that alarm confirms the delivered result", async () => {
    const rolloutId = uniqueId("delivery-alarm");
    const group = {
      uid: `${rolloutId}-g`,
      sample_index: 0,
      group_size: 1,
      batch_id: null,
      training_mode: "async",
      data_manager: "train",
    };
    expect(
      (
        await postRollout({
          agent: "external",
          rollout_id: rolloutId,
          task: { problem: "p" },
          group,
        })
      ).status,
    ).toBe(202);
    expect(
      (
        await api(`/v1/rollouts/${rolloutId}/finish`, {
          method: "POST",
          body: JSON.stringify({ reward: 1 }),
        })
      ).status,
    ).toBe(200);

    const published = await waitFor("the publication", async () => {
      const publication = (await readState(rolloutId)).publication;
      return publication.status === "published" && publication.delivery ? publication : undefined;
    });
    expect(published.delivery).toMatchObject({ checks: 0, confirmed_at: null, gave_up: false });
    expect(published.delivery!.next_check_at! - published.published_at!).toBeGreaterThanOrEqual(
      DELIVERY_CHECK_DELAYS_MS[0] - 1_000,
    );
    // The object wakes up for the check on its own: its alarm is set for it.
    expect(await alarmOf(rolloutId)).toBe(published.delivery!.next_check_at);

    await waitFor("the result in the feed", async () =>
      (await objects(env).feedShard().holds(rolloutId)) ? true : undefined,
    );
    // Bring the check due now rather than waiting 15 s, then let the object's alarm run it.
    await patchState(rolloutId, (state) => ({
      ...state,
      publication: {
        ...state.publication,
        delivery: { ...state.publication.delivery!, next_check_at: Date.now() - 1 },
      },
    }));
    expect(await runDurableObjectAlarm(objectOf(rolloutId))).toBe(true);

    // The alarm sent a delivery_check; the consumer's answer confirms it.
    const after = await waitFor("the confirmed delivery", async () => {
      const publication = (await readState(rolloutId)).publication;
      return publication.delivery?.confirmed_at ? publication : undefined;
    });
    expect(after.delivery).toMatchObject({
      checks: 1,
      next_check_at: null,
      gave_up: false,
      confirmed_at: expect.any(Number),
    });
    expect(after.attempts).toBe(published.attempts);
    // Confirmed: the object no longer wakes up for it.
    expect(await alarmOf(rolloutId)).toBeNull();
  });

  it("answers a batch of sessions' checks with one holdsMany per feed shard, never one holds per rollout", async () => {
    const ids = Array.from({ length: 8 }, () => uniqueId("delivery-batch"));
    for (const [i, rolloutId] of ids.entries()) {
      const group = {
        uid: `${ids[0]}-g`,
        sample_index: i,
        group_size: ids.length,
        batch_id: null,
        training_mode: "async",
        data_manager: "train",
      };
      expect(
        (
          await postRollout({
            agent: "external",
            rollout_id: rolloutId,
            task: { problem: "p" },
            group,
          })
        ).status,
      ).toBe(202);
      expect(
        (
          await api(`/v1/rollouts/${rolloutId}/finish`, {
            method: "POST",
            body: JSON.stringify({ reward: 1 }),
          })
        ).status,
      ).toBe(200);
    }
    for (const rolloutId of ids)
      await waitFor("the result in the feed", async () =>
        (await objects(env).feedShard().holds(rolloutId)) ? true : undefined,
      );
    const before = await feedRequests();
    // As the sessions' alarms would send them, but at once: they reach the consumer in one batch.
    await env.ROLLOUT_RESULTS.sendBatch(
      ids.map((rolloutId) => ({
        body: { kind: "delivery_check", rollout_id: rolloutId, uid: `${ids[0]}-g` },
      })),
    );
    for (const rolloutId of ids) {
      await waitFor("the confirmed delivery", async () =>
        (await readState(rolloutId)).publication.delivery?.confirmed_at ? true : undefined,
      );
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
