/**
 * Integration: admissions a dead invocation leaves behind. A driver that crashes mid-call never
 * releases its admission; the rollout's session drops it when another driver takes the expired
 * lease over, and drops whatever is left when the rollout ends, so a weight sync never waits for
 * a call that can no longer be committed (issue 10, item 7).
 */
import { objects } from "../../../../src/runtime/objects/object-directory";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { admissionShardCount, shardIndexOf } from "../../../../src/runtime/object-names";
import { driveRollout } from "../../../../src/runtime/driver/drive-rollout";
import { createExternal, openaiFor } from "../../../fixtures/external-rollouts";
import {
  createByHand,
  dyingDriverDeps,
  expireLease,
  sessionOf,
} from "../../../fixtures/hand-session";
import { api, uniqueId, waitFor } from "../../../fixtures/rollouts";
import { admission, uniqueCallId } from "../../fixtures/policy-fixtures";
// Registers the "test-loop" agent the hand-made rollout runs.
import "../../../fixtures/test-agents";

/** Calls counted in flight by the shard `rolloutId`'s calls go to. */
const shardInFlight = (rolloutId: string) => objects(env).shard(rolloutId).inFlight();

describe("admissions of a crashed invocation", () => {
  it("are dropped when a new driver takes over the expired lease, and only that rollout's", async () => {
    const rolloutId = uniqueId("adm-takeover");
    const bystander = `${rolloutId}-bystander`;
    await createByHand(rolloutId, { task: { extra_args: { done_after: 3 } } });
    await expect(driveRollout(dyingDriverDeps(2), rolloutId)).rejects.toThrow("invocation died");
    // The dead driver's call in flight, and a live call of another rollout on the same shard.
    await admission().acquire(rolloutId, uniqueCallId("dead-call"), 600_000);
    const bystanderId = rolloutOnSameShard(rolloutId, bystander);
    const liveCall = uniqueCallId("live-call");
    await admission().acquire(bystanderId, liveCall, 600_000);
    const before = await shardInFlight(rolloutId);

    await expireLease(rolloutId);
    expect((await sessionOf(rolloutId).lease("driver-b")).ok).toBe(true);
    const after = await shardInFlight(rolloutId);
    expect(after).toBeLessThan(before);
    // The other rollout's call is still counted: releasing it is what brings its count down.
    await admission().release(bystanderId, liveCall);
    expect(await shardInFlight(rolloutId)).toBe(after - 1);
  });

  it("are dropped when the rollout ends, as an external rollout whose stream was cut by a crash", async () => {
    const created = await createExternal();
    const id = created.rollout_id;
    await admission().acquire(id, uniqueCallId("crashed-stream"), 600_000);
    const before = await shardInFlight(id);
    const finish = await api(`/v1/rollouts/${id}/finish`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ reward: 1 }),
    });
    expect(finish.status).toBeLessThan(300);
    await waitFor("the ended rollout's admission to be dropped", async () =>
      (await shardInFlight(id)) === before - 1 ? true : undefined,
    );
  });
});

describe("a gateway call its session refuses", () => {
  it("is never left counted, though a rollout's later calls ask the session and the shard at once", async () => {
    const created = await createExternal();
    const id = created.rollout_id;
    const ask = () =>
      openaiFor(created.llm.base_url, created.llm.api_key)
        .chat.completions.create({
          model: "any",
          messages: [{ role: "user", content: "What is 1 + 1?" }],
        })
        .then(
          () => 200,
          (error: { status?: number }) => error.status ?? -1,
        );
    // The first call teaches the Worker the rollout's admission ttl; later ones admit at both at once.
    expect(await ask()).toBe(200);
    const idle = await shardInFlight(id);
    expect((await api(`/v1/rollouts/${id}/cancel`, { method: "POST" })).status).toBe(200);
    expect(await ask()).toBe(409);
    expect(await ask()).toBe(409);
    expect(await shardInFlight(id)).toBeLessThanOrEqual(idle);
  });
});

/** A rollout id (derived from `seed`) whose calls go to the same shard as `rolloutId`'s. */
function rolloutOnSameShard(rolloutId: string, seed: string): string {
  const shards = admissionShardCount(env.ADMISSION_SHARDS);
  for (let i = 0; ; i++)
    if (shardIndexOf(`${seed}-${i}`, shards) === shardIndexOf(rolloutId, shards))
      return `${seed}-${i}`;
}
