/** Integration: leases on pulled groups — ack, expiry and redelivery — the pull limits, and the group timeout. */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { FeedStorage } from "../../../../src/runtime/feed/feed-storage";
import { sleep } from "../../fixtures/policy-fixtures";
import { ingestAll, isolatedFeed, publishGroup, runFeedAlarm } from "../../fixtures/feed-fixtures";

/** Uids of the feed's ready groups as stored, read without the lazy housekeeping a call would do. */
function storedReady(name: string): Promise<string[]> {
  return runInDurableObject(
    env.TRAINER_FEED.get(env.TRAINER_FEED.idFromName(name)),
    (_instance, state) => new FeedStorage(state.storage.sql).groupsIn("ready").map((g) => g.uid),
  );
}

describe("leases", () => {
  it("empties the feed when a pulled lease is acked, and acking again is a no-op", async () => {
    const { feed } = isolatedFeed("ack");
    await ingestAll(feed, (await publishGroup(2)).messages);
    await ingestAll(feed, (await publishGroup(2)).messages);
    const pulled = await feed.pull({ max_groups: 10, lease_ms: 60_000 }, 0);
    if (!pulled.ok || !pulled.lease_id) throw new Error("nothing pulled");
    expect(pulled.groups).toHaveLength(2);
    expect(await feed.stats()).toMatchObject({
      ready_groups: 0,
      leased_groups: 2,
      delivered: 2,
      active_leases: 1,
    });
    expect(await feed.ack(pulled.lease_id)).toEqual({
      ok: true,
      lease_id: pulled.lease_id,
      acked_groups: 2,
      already: false,
    });
    expect(await feed.ack(pulled.lease_id)).toEqual({
      ok: true,
      lease_id: pulled.lease_id,
      acked_groups: 2,
      already: true,
    });
    expect(await feed.stats()).toMatchObject({
      pending_groups: 0,
      ready_groups: 0,
      leased_groups: 0,
      acked: 2,
      active_leases: 0,
    });
    expect(await feed.pull({ max_groups: 10 }, 0)).toMatchObject({ lease_id: null, groups: [] });
  });

  it("answers an unknown lease with a result, not a throw", async () => {
    const { feed } = isolatedFeed("unknown");
    expect(await feed.ack("lease-nope")).toEqual({
      ok: false,
      reason: "unknown_lease",
      lease_id: "lease-nope",
    });
  });

  it("delivers a group again after its lease expired unacked, and refuses the old lease's ack", async () => {
    const { feed, name } = isolatedFeed("expiry");
    const { uid, messages } = await publishGroup(2);
    await ingestAll(feed, messages);
    const first = await feed.pull({ max_groups: 1, lease_ms: 1_000 }, 0);
    if (!first.ok || !first.lease_id) throw new Error("nothing pulled");
    expect(await feed.pull({ max_groups: 1 }, 0)).toMatchObject({ lease_id: null });
    await sleep(1_100);
    await runFeedAlarm(name);
    expect(await storedReady(name)).toEqual([uid]);
    expect(await feed.stats()).toMatchObject({
      ready_groups: 1,
      leased_groups: 0,
      lease_expired: 1,
    });
    const second = await feed.pull({ max_groups: 1, lease_ms: 60_000 }, 0);
    expect(second.ok && second.groups.map((g) => [g.uid, g.deliveries])).toEqual([[uid, 2]]);
    expect(await feed.ack(first.lease_id)).toEqual({
      ok: false,
      reason: "lease_expired",
      lease_id: first.lease_id,
    });
    expect(second.ok && second.lease_id && (await feed.ack(second.lease_id))).toMatchObject({
      ok: true,
      acked_groups: 1,
    });
  });

  it("takes whole groups, oldest first, up to max_groups or max_samples", async () => {
    const { feed } = isolatedFeed("limits");
    const uids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const group = await publishGroup(2);
      await ingestAll(feed, group.messages);
      uids.push(group.uid);
    }
    const bySamples = await feed.pull({ max_samples: 3 }, 0);
    expect(bySamples.ok && bySamples.groups.map((g) => g.uid)).toEqual([uids[0]]);
    const byGroups = await feed.pull({ max_groups: 5, max_samples: 1 }, 0);
    expect(byGroups.ok && byGroups.groups.map((g) => g.uid)).toEqual([uids[1]]);
    const rest = await feed.pull({ max_groups: 5 }, 0);
    expect(rest.ok && rest.groups.map((g) => g.uid)).toEqual([uids[2]]);
  });

  it("validates a pull made over RPC as the route does", async () => {
    const { feed } = isolatedFeed("rpc-validation");
    const refused = await feed.pull({ lease_ms: 10 }, 0);
    expect(refused.ok ? [] : refused.errors.map((e) => e.path).sort()).toEqual([
      "lease_ms",
      "max_groups",
    ]);
  });
});

describe("the group timeout", () => {
  it("releases an incomplete group with what arrived, flagged partial, and counts later arrivals as late", async () => {
    const { feed, name } = isolatedFeed("timeout");
    expect(await feed.configure({ group_timeout_ms: 200 })).toMatchObject({
      ok: true,
      config: { group_timeout_ms: 200 },
    });
    const { uid, messages } = await publishGroup(3);
    await ingestAll(feed, messages.slice(0, 2));
    expect(await feed.pull({ max_groups: 1 }, 0)).toMatchObject({ lease_id: null });
    await sleep(250);
    await runFeedAlarm(name);
    expect(await storedReady(name)).toEqual([uid]);
    expect(await feed.stats()).toMatchObject({
      pending_groups: 0,
      ready_groups: 1,
      partial_released: 1,
    });
    const pulled = await feed.pull({ max_groups: 1 }, 0);
    if (!pulled.ok || !pulled.lease_id) throw new Error("nothing pulled");
    expect(pulled.groups[0]).toMatchObject({ uid, partial: true, group_size: 3 });
    expect(pulled.groups[0]!.members.map((m) => m.sample_index)).toEqual([0, 1]);
    await feed.ack(pulled.lease_id);
    expect(await feed.ingest(messages[2])).toMatchObject({ ok: true, outcome: "late" });
    expect(await feed.stats()).toMatchObject({ pending_groups: 0, late: 1 });
  });

  it("waits for ever without a timeout (the default)", async () => {
    const { feed } = isolatedFeed("no-timeout");
    expect((await feed.config()).group_timeout_ms).toBeNull();
    await ingestAll(feed, (await publishGroup(2)).messages.slice(0, 1));
    await sleep(50);
    expect(await feed.stats()).toMatchObject({ pending_groups: 1, partial_released: 0 });
  });
});
