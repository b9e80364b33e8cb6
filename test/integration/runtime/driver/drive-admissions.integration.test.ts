/**
 * Integration: what a real stepwise drive asks of its admission shard, on real Durable Objects
 * and the vLLM simulator. Each call's release rides on the rollout's next admission, so a drive
 * of N calls makes N acquires and one release of its own (the last call's, sent before the
 * rollout is finished); a release whose next admission does not come within the grace period
 * (a slow environment) goes alone. No call of the rollout is left counted at the shard. A drive
 * that saw every release land tells its session so, and the publication does not ask the shard
 * to drop the rollout's calls again; one whose release failed leaves that to the publication.
 */
import { objects } from "../../../../src/runtime/objects/object-directory";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { driverDeps } from "../../../../functions/driver-deps";
import {
  RELEASE_GRACE_MS,
  type ReleasingPolicyPort,
} from "../../../../src/gateway/release-on-next-admission";
import { driveRollout } from "../../../../src/runtime/driver/drive-rollout";
import {
  createByHand,
  dyingDriverDeps,
  expireLease,
  readState,
} from "../../../fixtures/hand-session";
import { getRollout, uniqueId, waitFor } from "../../../fixtures/rollouts";
import "../../../fixtures/test-agents";

/**
 * The Worker's real driver dependencies, with the shard requests of the drive written down in
 * order. `onRelease` runs before a release goes alone (the last call's, at the drive's end) and
 * may fail it.
 */
function recordedDrive(
  releaseGraceMs = RELEASE_GRACE_MS,
  onRelease?: (rolloutId: string) => Promise<void>,
) {
  const requests: string[] = [];
  const shards = objects(env).admission();
  const recording: ReleasingPolicyPort = {
    acquire: (rolloutId, callId, ttlMs, releasing) => {
      requests.push(releasing?.length ? `acquire+release ${releasing.length}` : "acquire");
      return shards.acquire(rolloutId, callId, ttlMs, releasing);
    },
    release: async (rolloutId, callId) => {
      requests.push("release");
      await onRelease?.(rolloutId);
      return shards.release(rolloutId, callId);
    },
  };
  return { deps: driverDeps(env, recording, releaseGraceMs), requests };
}

/** The rollout's state once its publication is done. */
function published(rolloutId: string) {
  return waitFor(`rollout ${rolloutId} to be published`, async () => {
    const state = await readState(rolloutId);
    return state.publication.status === "published" ? state : undefined;
  });
}

/**
 * A call admitted at the rollout's shard outside its driver, before the drive's last release:
 * what only the publication's rollout-wide release would drop.
 */
async function strayAdmission(rolloutId: string): Promise<void> {
  const admitted = await objects(env).admission().acquire(rolloutId, `${rolloutId}/stray`, 600_000);
  expect(admitted.ok).toBe(true);
}

async function countedAtShard(rolloutId: string): Promise<number> {
  // Dropping the rollout's calls reports how many were still counted (none should be).
  return objects(env).shard(rolloutId).releaseRollout(rolloutId);
}

describe("a drive's requests to its admission shard", () => {
  it("makes one request per model call: each release goes with the next acquire, the last one alone before the finish", async () => {
    const rolloutId = uniqueId("drive-admissions");
    await createByHand(rolloutId, { agent: "test-loop", task: { extra_args: { done_after: 4 } } });
    // A grace far above any step here: on a loaded machine an instant step can outlast 100 ms, and
    // its release would go alone. The drive's end sends the last release at once, whatever the grace.
    const { deps, requests } = recordedDrive(30_000);
    expect(await driveRollout(deps, rolloutId)).toMatchObject({ result: "finished", steps: 4 });
    expect(requests).toEqual([
      "acquire",
      "acquire+release 1",
      "acquire+release 1",
      "acquire+release 1",
      "release",
    ]);
    expect(await countedAtShard(rolloutId)).toBe(0);
    const view = await getRollout(rolloutId);
    expect(view.llm_calls).toHaveLength(4);
    expect(
      view.llm_calls.every((call) => call.policy_version_end === call.policy_version_start),
    ).toBe(true);
    expect((await readState(rolloutId)).status).toBe("succeeded");
  });

  it("tells its session every release landed, so the publication does not ask the shard again", async () => {
    const rolloutId = uniqueId("drive-admissions-released");
    await createByHand(rolloutId, { agent: "test-loop", task: { extra_args: { done_after: 2 } } });
    const { deps } = recordedDrive(30_000, strayAdmission);
    expect(await driveRollout(deps, rolloutId)).toMatchObject({ result: "finished", steps: 2 });
    const state = await published(rolloutId);
    expect(state.admissions_released).toBe(true);
    // The stray is still counted: the publication sent no rollout-wide release (the one here counts it).
    expect(await countedAtShard(rolloutId)).toBe(1);
  });

  it("is not trusted after a takeover: the publication drops what an earlier driver may have left", async () => {
    const rolloutId = uniqueId("drive-admissions-takeover");
    await createByHand(rolloutId, { agent: "test-loop", task: { extra_args: { done_after: 3 } } });
    await expect(driveRollout(dyingDriverDeps(2), rolloutId)).rejects.toThrow("invocation died");
    await expireLease(rolloutId);
    const { deps } = recordedDrive(30_000, strayAdmission);
    expect(await driveRollout(deps, rolloutId)).toMatchObject({ result: "finished" });
    const state = await published(rolloutId);
    expect(state.epoch).toBe(2);
    expect(state.admissions_released).toBe(false);
    expect(await countedAtShard(rolloutId)).toBe(0);
  });

  it("leaves the release to the publication when one of its own releases failed", async () => {
    const rolloutId = uniqueId("drive-admissions-failed-release");
    await createByHand(rolloutId, { agent: "test-loop", task: { extra_args: { done_after: 2 } } });
    const { deps } = recordedDrive(30_000, async (id) => {
      await strayAdmission(id);
      throw new Error("shard unreachable");
    });
    expect(await driveRollout(deps, rolloutId)).toMatchObject({ result: "finished", steps: 2 });
    const state = await published(rolloutId);
    expect(state.admissions_released).toBe(false);
    // The failed release's call and the stray were both dropped by the publication.
    expect(await countedAtShard(rolloutId)).toBe(0);
  });

  it("sends a release on its own when the environment takes longer than the grace period", async () => {
    const rolloutId = uniqueId("drive-admissions-slow");
    await createByHand(rolloutId, {
      agent: "test-loop",
      task: { extra_args: { done_after: 2, step_sleep_ms: RELEASE_GRACE_MS * 3 } },
    });
    const { deps, requests } = recordedDrive();
    expect(await driveRollout(deps, rolloutId)).toMatchObject({ result: "finished", steps: 2 });
    // Each call's release was sent while its environment step still ran.
    expect(requests).toEqual(["acquire", "release", "acquire", "release"]);
    expect(await countedAtShard(rolloutId)).toBe(0);
  });
});
