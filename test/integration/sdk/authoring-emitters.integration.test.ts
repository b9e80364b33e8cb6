/** Integration: emitters find their rollout through AsyncLocalStorage, with many attempts running in one isolate. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { driverDeps } from "../../../functions/work.consumer";
import { driveRollout } from "../../../src/runtime/driver/drive-rollout";
import "../../fixtures/authoring-agents";
import { createByHand } from "../../fixtures/hand-session";
import { getRollout, uniqueId } from "../../fixtures/rollouts";

describe("emitters under concurrency (integration)", () => {
  /**
   * The method: in the workerd pool the work queue delivers one batch of at most 6 messages at a
   * time, so the queue cannot show 20 rollouts at once. Instead this test plays 20 queue consumers
   * itself: it creates 20 rollouts by hand (not announced to the queue) and drives all of them
   * with `Promise.all` in this one isolate. `authoring-fn-emit` makes a model call, then a helper
   * three calls deep sleeps a random 0-40 ms (so the attempts interleave) and calls `emitReward`
   * with no context argument. Each rollout must get exactly its own reward span and reward.
   */
  it("lands emitReward from three calls deep on the right rollout while 20 rollouts run concurrently", async () => {
    const rollouts = Array.from({ length: 20 }, (_, i) => ({
      id: uniqueId(`emit-${i}`),
      reward: (i + 1) / 20,
    }));
    await Promise.all(
      rollouts.map(({ id, reward }) =>
        createByHand(id, {
          agent: "authoring-fn-emit",
          task: { problem: `Say hi to ${id}.`, extra_args: { reward } },
        }),
      ),
    );
    const deps = driverDeps(env);
    const outcomes = await Promise.all(rollouts.map(({ id }) => driveRollout(deps, id)));
    expect(outcomes.every((outcome) => outcome.result === "finished")).toBe(true);
    for (const { id, reward } of rollouts) {
      const view = await getRollout(id);
      expect(view, id).toMatchObject({ status: "succeeded", reward });
      const rewards = view.spans.filter((span) => span.kind === "reward");
      expect(rewards, id).toEqual([
        expect.objectContaining({
          value: { score: reward, constant: 1 },
          attributes: { primary_key: "score", attempt: 1 },
        }),
      ]);
      expect(
        view.llm_calls.map(
          (call) => (call.request.messages as Array<{ content: string }>)[0]!.content,
        ),
        id,
      ).toEqual([`Say hi to ${id}.`]);
    }
  });

  it("numbers an attempt's spans in emission order", async () => {
    const id = uniqueId("emit-order");
    await createByHand(id, { agent: "authoring-fn-spans", task: { problem: "Say hi." } });
    await driveRollout(driverDeps(env), id);
    const view = await getRollout(id);
    // Between the attempt's start and end spans (the SSE stream's attempt events).
    expect(view.spans.map((span) => span.sequence_id)).toEqual([1, 2, 3, 4]);
    expect(view.spans.map((span) => span.name)).toEqual(["attempt", "note", "span", "attempt"]);
  });
});
