/**
 * Integration: groups that used to be lost on their way to the trainer (issue 10 items 2, 3) and
 * what one inline pull may cost (item 13).
 */
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { r2SizedReader } from "../../../../src/sink/publication/r2-blobs";
import { inlineSamples } from "../../../../src/runtime/feed/inline-samples";
import type { FeedGroup, InlineFeedGroup, PullResponse } from "../../../../src/schemas/feed";
import {
  RESULT_MESSAGE_SCHEMA_VERSION,
  ResultMessage,
} from "../../../../src/schemas/result-message";
import { calculatorRows, postBatch, waitForBatch } from "../../../fixtures/datasets/batch-api";
import { postRollout, uniqueId, waitFor } from "../../../fixtures/rollouts";
import {
  drainDefaultFeed,
  ingestAll,
  isolatedFeed,
  postJson,
  publishGroup,
  publishHandResult,
} from "../../fixtures/feed-fixtures";

/**
 * What a rollout that failed before its first model call publishes: no samples, version 0. A
 * policy outcome (user code raised a PolicyError), so its group is delivered, not withheld.
 */
function noCallMember(uid: string, sampleIndex: number, groupSize: number): ResultMessage {
  const rolloutId = uniqueId("no-call");
  return ResultMessage.parse({
    schema_version: RESULT_MESSAGE_SCHEMA_VERSION,
    rollout_id: rolloutId,
    status: "failed",
    termination_reason: "AGENT_ERROR",
    reward: null,
    uid,
    sample_index: sampleIndex,
    group_size: groupSize,
    batch_id: null,
    training_mode: "verl/hybrid",
    data_manager: "train",
    policy_version_start: 0,
    policy_version_end: 0,
    key: `rollouts/${rolloutId}/record.json`,
    atif_key: `rollouts/${rolloutId}/atif.json`,
    samples: 0,
    finished_at: Date.now(),
    outcome: "policy",
  });
}

describe("a member without model calls (item 2)", () => {
  it("does not make its group stale: the group's version comes from members with samples", async () => {
    const { feed } = isolatedFeed("feed-no-call");
    const uid = uniqueId("uid");
    const good = await publishHandResult({
      uid,
      sample_index: 0,
      group_size: 2,
      policy_version: 3,
    });
    await ingestAll(feed, [noCallMember(uid, 1, 2), good.message]);
    const pulled = await feed.pull({ max_groups: 10 }, 3);
    expect(pulled).toMatchObject({ ok: true, dropped_stale: 0 });
    expect(
      pulled.ok && pulled.groups.map((g) => [g.uid, g.policy_version_start, g.members.length]),
    ).toEqual([[uid, 3, 2]]);
  });

  it("delivers a group whose members all failed before any call, at any policy version", async () => {
    const { feed } = isolatedFeed("feed-all-failed");
    const uid = uniqueId("uid");
    await ingestAll(feed, [noCallMember(uid, 0, 2), noCallMember(uid, 1, 2)]);
    const pulled = await feed.pull({ max_groups: 10 }, 7);
    expect(pulled.ok && [pulled.dropped_stale, pulled.groups.map((g) => g.uid)]).toEqual([
      0,
      [uid],
    ]);
  });
});

describe("a batch slot whose rollout id is taken (item 3)", () => {
  beforeEach(drainDefaultFeed);

  it("still closes its feed group: withheld as an infrastructure failure naming the stand-in", async () => {
    const batchId = uniqueId("taken");
    expect(
      (
        await postRollout({
          agent: "external",
          rollout_id: `${batchId}:0:1`,
          task: { problem: "squatter" },
        })
      ).status,
    ).toBe(202);
    expect(
      (
        await postBatch({
          batch_id: batchId,
          agent: "calculator",
          rows: calculatorRows().slice(0, 1),
          n: 2,
          mode: "train",
        })
      ).status,
    ).toBe(202);
    expect(await waitForBatch(batchId)).toMatchObject({ done: true, counts: { failed: 1 } });
    const dropped = await waitFor("the batch's group in the feed", async () => {
      const pulled = (await (
        await postJson("/v1/feed/pull", { max_groups: 1024, inline: true, batch_id: batchId })
      ).json()) as PullResponse<InlineFeedGroup>;
      if (pulled.lease_id) await postJson("/v1/feed/ack", { lease_id: pulled.lease_id });
      expect(pulled.groups).toEqual([]);
      return pulled.dropped_groups.find((g) => g.uid === `${batchId}:0`);
    });
    expect(dropped).toMatchObject({ reason: "infra_failure", arrived: 2 });
    expect(dropped.failed_members).toEqual([
      {
        rollout_id: `${batchId}:0:1#id-taken`,
        sample_index: 1,
        termination_reason: null,
        outcome: "infra",
        member_attempt: 0,
      },
    ]);
  });
});

describe("the cost of an inline pull (item 13)", () => {
  it("leases no more members than an inline pull may read (the first group always)", async () => {
    const { feed } = isolatedFeed("feed-members");
    const groups = [await publishGroup(3), await publishGroup(2), await publishGroup(2)];
    await ingestAll(
      feed,
      groups.flatMap((g) => g.messages),
    );
    const first = await feed.pull({ max_groups: 10 }, 0, { max_members: 2 });
    expect(first.ok && first.groups.map((g) => g.uid)).toEqual([groups[0]!.uid]);
    const second = await feed.pull({ max_groups: 10 }, 0, { max_members: 4 });
    expect(second.ok && second.groups.map((g) => g.uid)).toEqual([groups[1]!.uid, groups[2]!.uid]);
  });

  it("reads records within a byte budget and hands the groups that do not fit back to the feed, first in line", async () => {
    const { feed } = isolatedFeed("feed-bytes");
    const groups = [await publishGroup(2), await publishGroup(2), await publishGroup(2)];
    await ingestAll(
      feed,
      groups.flatMap((g) => g.messages),
    );
    const pulled = (await feed.pull({ max_groups: 10 }, 0)) as {
      ok: true;
    } & PullResponse<FeedGroup>;
    const recordBytes = JSON.stringify(groups[0]!.records[0]).length;
    // Room for the first group and a little more: the second group's records do not fit.
    const inlined = await inlineSamples(
      r2SizedReader(env.TRAJECTORIES),
      pulled.groups,
      recordBytes * 3,
    );
    expect(inlined.groups.map((g) => g.uid)).toEqual([groups[0]!.uid]);
    expect(inlined.groups[0]!.members.map((m) => m.samples)).toEqual(
      groups[0]!.records.map((r) => r.samples),
    );
    expect(inlined.returned).toEqual([groups[1]!.uid, groups[2]!.uid]);
    expect(await feed.returnGroups(pulled.lease_id!, inlined.returned)).toBe(2);
    const again = await feed.pull({ max_groups: 10 }, 0);
    expect(again.ok && again.groups.map((g) => [g.uid, g.deliveries])).toEqual([
      [groups[1]!.uid, 1],
      [groups[2]!.uid, 1],
    ]);
    expect(await feed.ack(pulled.lease_id!)).toMatchObject({ ok: true, acked_groups: 1 });
  });
});
