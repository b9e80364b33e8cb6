/**
 * Integration: staleness bounds by training mode, against the policy version the trainer moves
 * through `/v1/policy/sync/{begin,end}`. The policy object is per file, and every bump ends its sync.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { FeedGroup, PullResponse } from "../../../../src/schemas/feed";
import { api, uniqueId } from "../../../fixtures/rollouts";
import {
  bumpPolicyVersion,
  defaultFeed,
  drainDefaultFeed,
  feedStats,
  ingestAll,
  postJson,
  publishGroup,
  publishHandResult,
} from "../../fixtures/feed-fixtures";

async function pull(body: Record<string, unknown>): Promise<PullResponse<FeedGroup>> {
  const response = await postJson("/v1/feed/pull", body);
  expect(response.status).toBe(200);
  return (await response.json()) as PullResponse<FeedGroup>;
}

beforeEach(drainDefaultFeed);

describe("stale groups", () => {
  it("drops a verl/hybrid group one version behind but delivers a verl/one_step_off one", async () => {
    const version = (await feedStats()).policy_version;
    const hybrid = await publishGroup(2, { training_mode: "verl/hybrid", policy_version: version });
    const offByOne = await publishGroup(2, {
      training_mode: "verl/one_step_off",
      policy_version: version,
    });
    await ingestAll(defaultFeed(), [...hybrid.messages, ...offByOne.messages]);
    const before = await feedStats();
    expect(await bumpPolicyVersion()).toBe(version + 1);
    const pulled = await pull({ max_groups: 10 });
    expect(pulled.policy_version).toBe(version + 1);
    expect(pulled.dropped_stale).toBe(1);
    expect(pulled.groups.map((g) => [g.uid, g.training_mode, g.policy_version_start])).toEqual([
      [offByOne.uid, "verl/one_step_off", version],
    ]);
    const after = await feedStats();
    expect(
      after.by_training_mode["verl/hybrid"]!.dropped_stale -
        (before.by_training_mode["verl/hybrid"]?.dropped_stale ?? 0),
    ).toBe(1);
    expect(
      after.by_training_mode["verl/one_step_off"]!.dropped_stale -
        (before.by_training_mode["verl/one_step_off"]?.dropped_stale ?? 0),
    ).toBe(0);
    expect((await (await api("/v1/policy")).json()) as { syncing: unknown }).toMatchObject({
      syncing: null,
    });
  });

  it("judges a group by its oldest member: a verl/one_step_off group is dropped two versions behind it", async () => {
    const version = (await feedStats()).policy_version;
    const mixed = uniqueId("mixed");
    const older = await publishHandResult({
      uid: mixed,
      sample_index: 0,
      group_size: 2,
      training_mode: "verl/one_step_off",
      policy_version: version,
    });
    await ingestAll(defaultFeed(), [older.message]);
    await bumpPolicyVersion();
    const younger = await publishHandResult({
      uid: mixed,
      sample_index: 1,
      group_size: 2,
      training_mode: "verl/one_step_off",
      policy_version: version + 1,
    });
    const fresh = await publishGroup(2, {
      training_mode: "verl/one_step_off",
      policy_version: version + 1,
    });
    await ingestAll(defaultFeed(), [younger.message, ...fresh.messages]);
    await bumpPolicyVersion();
    const pulled = await pull({ max_groups: 10 });
    expect(pulled.dropped_stale).toBe(1);
    expect(pulled.groups.map((g) => [g.uid, g.policy_version_start, g.policy_version_end])).toEqual(
      [[fresh.uid, version + 1, version + 1]],
    );
  });

  it("bounds async groups by the default or by the k in async/<k>", async () => {
    const version = (await feedStats()).policy_version;
    const byDefault = await publishGroup(1, { training_mode: "async", policy_version: version });
    const tight = await publishGroup(1, { training_mode: "async/1", policy_version: version });
    await ingestAll(defaultFeed(), [...byDefault.messages, ...tight.messages]);
    await bumpPolicyVersion();
    await bumpPolicyVersion();
    const pulled = await pull({ max_groups: 10 });
    expect(pulled.groups.map((g) => g.uid)).toEqual([byDefault.uid]);
    expect(pulled.dropped_stale).toBe(1);
  });

  it("skips, without dropping, groups older than min_policy_version and other training modes", async () => {
    const version = (await feedStats()).policy_version;
    const old = await publishGroup(1, { training_mode: "async", policy_version: version });
    await ingestAll(defaultFeed(), old.messages);
    await bumpPolicyVersion();
    expect((await pull({ max_groups: 10, min_policy_version: version + 1 })).groups).toEqual([]);
    expect((await pull({ max_groups: 10, training_mode: "verl/hybrid" })).groups).toEqual([]);
    expect(
      (await pull({ max_groups: 10, training_mode: "async" })).groups.map((g) => g.uid),
    ).toEqual([old.uid]);
  });

  it("reports a batch's dropped groups to every later pull that names the batch, and to no other", async () => {
    const version = (await feedStats()).policy_version;
    const batchId = uniqueId("stale-batch");
    const stale = await publishGroup(2, {
      training_mode: "verl/hybrid",
      policy_version: version,
      batch_id: batchId,
    });
    const kept = await publishGroup(2, {
      training_mode: "verl/one_step_off",
      policy_version: version,
      batch_id: batchId,
    });
    const noBatch = await publishGroup(1, {
      training_mode: "verl/hybrid",
      policy_version: version,
    });
    await ingestAll(defaultFeed(), [...stale.messages, ...kept.messages, ...noBatch.messages]);
    await bumpPolicyVersion();
    // An unfiltered pull drops both stale groups but reports none: it waits for no batch.
    const first = await pull({ max_groups: 10, training_mode: "verl/hybrid" });
    expect([first.dropped_stale, first.dropped_groups, first.groups]).toEqual([2, [], []]);

    const expected = {
      uid: stale.uid,
      batch_id: batchId,
      training_mode: "verl/hybrid",
      reason: "stale",
      group_size: 2,
      arrived: 2,
      max_staleness: 0,
      policy_version_start: version,
      policy_version_end: version,
      policy_version: version + 1,
    };
    const byId = await pull({ max_groups: 10, batch_id: batchId });
    expect(byId.dropped_stale).toBe(0);
    expect(byId.dropped_groups).toEqual([{ ...expected, dropped_at: expect.any(Number) }]);
    expect(byId.groups.map((g) => g.uid)).toEqual([kept.uid]);
    const again = await pull({
      max_groups: 10,
      batch_id: [uniqueId("other"), batchId],
      batch_prefix: batchId.slice(0, 6),
    });
    expect(again.dropped_groups.filter((g) => g.batch_id === batchId).map((g) => g.uid)).toEqual([
      stale.uid,
    ]);
    expect(again.dropped_groups.map((g) => g.uid)).not.toContain(noBatch.uid);
    expect((await pull({ max_groups: 10, batch_id: uniqueId("other") })).dropped_groups).toEqual(
      [],
    );
    // The batch's route lists them without pulling, as the dashboard's batch page shows them.
    const listed = (await (await api(`/v1/batches/${batchId}/dropped-groups`)).json()) as {
      batch_id: string;
      dropped_groups: unknown[];
    };
    expect(listed).toEqual({ batch_id: batchId, dropped_groups: byId.dropped_groups });
    expect(
      (
        (await (await api(`/v1/batches/${uniqueId("other")}/dropped-groups`)).json()) as {
          dropped_groups: unknown[];
        }
      ).dropped_groups,
    ).toEqual([]);
    expect((await api(`/v1/batches/${encodeURIComponent("bad id!")}/dropped-groups`)).status).toBe(
      400,
    );
    // The feed's stats count them per batch too.
    const stats = (await (await api(`/v1/feed/stats?batch_id=${batchId}`)).json()) as {
      by_batch: Record<string, { dropped_groups: number; ready_groups: number }>;
    };
    expect(stats.by_batch[batchId]).toMatchObject({ dropped_groups: 1, ready_groups: 0 });
  });
});
