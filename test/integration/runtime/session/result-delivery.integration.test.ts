/**
 * Integration: a finished rollout's result that never reaches the trainer feed (the message sent
 * but lost: a local queue gone in a crash, a consumer failing into the dead-letter queue) is sent
 * again by its session until the feed holds it, and a confirmed one is not sent again. Each due
 * check asks (a `delivery_check` message in production); here the test answers it as the results
 * consumer would, with the real feed's answer (delivery-checks.integration.test.ts runs the consumer).
 * A sent result goes straight into the feed, not through the results queue: the consumer confirms
 * what it ingests at once (result-delivery-alarm.integration.test.ts), which would leave no check
 * to test here.
 */
import { objects } from "../../../../src/runtime/objects/object-directory";
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { r2Blobs } from "../../../../src/sink/publication/r2-blobs";
import { RolloutSessionCore } from "../../../../src/runtime/session/lifecycle";
import { SessionKernel } from "../../../../src/runtime/session/kernel";
import {
  DELIVERY_CHECK_DELAYS_MS,
  onDeliveryChecked,
} from "../../../../src/runtime/session/publication";
import { RolloutSpec } from "../../../../src/schemas/rollout-api";
import type { ResultMessage } from "../../../../src/schemas/result-message";
import { uniqueId, waitFor } from "../../../fixtures/rollouts";

/**
 * Creates a finished, feed-bound rollout inside its object with a results port that loses the
 * first `lose` messages, then runs the object's alarm at `checks` points in time (ms after the
 * rollout ended), answering each check it sends with whether the feed holds the result. Returns
 * the messages that were really sent, the checks asked, and the publication state.
 */
async function finishAndCheck(
  rolloutId: string,
  lose: number,
  checkAt: () => Promise<number | null>,
) {
  const sent: ResultMessage[] = [];
  let clock = Date.now();
  const object = env.ROLLOUT_SESSION.get(env.ROLLOUT_SESSION.idFromName(rolloutId));
  return runInDurableObject(object, async (_instance, state) => {
    const storage = state.storage;
    let offered = 0;
    let asked = 0;
    const kernel = new SessionKernel({
      storage: {
        sql: storage.sql,
        transactionSync: (fn) => storage.transactionSync(fn),
        setAlarm: () => undefined,
      },
      queue: { send: async () => undefined },
      now: () => clock,
      sink: {
        blobs: r2Blobs(env.TRAJECTORIES),
        results: {
          send: async (message) => {
            if (++offered <= lose) return; // sent, then lost on the way
            sent.push(message);
            await objects(env).feedShard().ingestBatch([message]);
          },
        },
        now: () => clock,
        requestDeliveryCheck: async () => void asked++,
      },
    });
    const core = new RolloutSessionCore(kernel);
    const group = {
      uid: `${rolloutId}-g`,
      sample_index: 0,
      group_size: 1,
      batch_id: null,
      training_mode: "verl/hybrid",
      data_manager: "train",
    };
    const spec = RolloutSpec.parse({
      rollout_id: rolloutId,
      agent: "external",
      kind: "external",
      task: { problem: "p", task_id: rolloutId, agent_name: "external" },
      config: {},
      created_at: clock,
      group,
    });
    await core.create(spec);
    kernel.end({ termination_reason: "ENV_DONE", reward: 1, error: null });
    const ended = clock;
    await core.onAlarm(); // publication
    for (let at = await checkAt(); at !== null; at = await checkAt()) {
      clock = ended + at;
      const before = asked;
      await core.onAlarm();
      if (asked > before)
        await (
          await onDeliveryChecked(kernel, await objects(env).feedShard().holds(rolloutId))
        ).resending;
    }
    return { sent, offered, asked, publication: kernel.state!.publication };
  });
}

const holds = (id: string) => objects(env).feedShard().holds(id);
/** Ms after the end at which check `k` (0-based) is due. */
const dueAt = (k: number) => DELIVERY_CHECK_DELAYS_MS.slice(0, k + 1).reduce((a, b) => a + b, 0);

describe("delivery of a finished rollout's result to the trainer feed", () => {
  it("sends a lost result again at the first check, and confirms it at the next", async () => {
    const rolloutId = uniqueId("delivery-lost");
    let check = 0;
    const { sent, offered, publication } = await finishAndCheck(rolloutId, 1, async () => {
      if (check === 1)
        await waitFor("the resent result in the feed", async () =>
          (await holds(rolloutId)) ? true : undefined,
        );
      return check < 2 ? dueAt(check++) : null;
    });
    expect(offered).toBe(2);
    expect(sent.map((message) => message.rollout_id)).toEqual([rolloutId]);
    expect(publication).toMatchObject({
      status: "published",
      delivery: { checks: 2, next_check_at: null, gave_up: false },
    });
    expect(publication.delivery!.confirmed_at).toEqual(expect.any(Number));
  });

  it("confirms a delivered result at the first check without sending it again", async () => {
    const rolloutId = uniqueId("delivery-ok");
    let check = 0;
    const { offered, publication } = await finishAndCheck(rolloutId, 0, async () => {
      if (check === 0)
        await waitFor("the result in the feed", async () =>
          (await holds(rolloutId)) ? true : undefined,
        );
      return check < 1 ? dueAt(check++) : null;
    });
    expect(offered).toBe(1);
    expect(publication.delivery).toMatchObject({ checks: 1, next_check_at: null, gave_up: false });
  });

  it("gives up, visibly, after the last check when the feed never gets it", async () => {
    const rolloutId = uniqueId("delivery-never");
    let check = 0;
    const { offered, publication } = await finishAndCheck(
      rolloutId,
      Number.POSITIVE_INFINITY,
      async () =>
        check < DELIVERY_CHECK_DELAYS_MS.length + 2
          ? dueAt(Math.min(check++, DELIVERY_CHECK_DELAYS_MS.length - 1)) + check
          : null,
    );
    expect(offered).toBe(1 + DELIVERY_CHECK_DELAYS_MS.length);
    expect(publication.delivery).toMatchObject({
      checks: DELIVERY_CHECK_DELAYS_MS.length,
      next_check_at: null,
      confirmed_at: null,
      gave_up: true,
    });
    expect(await holds(rolloutId)).toBe(false);
  });
});
