/** Integration: pulls and stats narrowed by batch and uid prefix leave every other group alone. */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { FeedStorage } from "../../../../src/runtime/feed/feed-storage";
import type { FeedGroup, FeedStats } from "../../../../src/schemas/feed";
import { api, uniqueId } from "../../../fixtures/rollouts";
import {
  expectProblem,
  ingestAll,
  isolatedFeed,
  postJson,
  publishGroup,
} from "../../fixtures/feed-fixtures";

/** Publishes `count` complete groups of size 2 of batch `batchId` (uids `<batch>:<row>`) into `feed`. */
async function batchGroups(
  feed: ReturnType<typeof isolatedFeed>["feed"],
  batchId: string,
  count: number,
): Promise<string[]> {
  const uids: string[] = [];
  for (let row = 0; row < count; row++) {
    const group = await publishGroup(2, { uid: `${batchId}:${row}`, batch_id: batchId });
    await ingestAll(feed, group.messages);
    uids.push(group.uid);
  }
  return uids;
}

/** Each stored group's state and lease, read without the housekeeping a call would do. */
function storedStates(name: string): Promise<Record<string, [string, string | null, number]>> {
  return runInDurableObject(
    env.TRAINER_FEED.get(env.TRAINER_FEED.idFromName(name)),
    (_instance, state) => {
      const storage = new FeedStorage(state.storage.sql);
      const rows = [
        ...storage.groupsIn("ready"),
        ...storage.groupsIn("leased"),
        ...storage.groupsIn("pending"),
      ];
      return Object.fromEntries(rows.map((g) => [g.uid, [g.state, g.lease_id, g.deliveries]]));
    },
  );
}

const uidsOf = (pulled: { ok: boolean; groups?: FeedGroup[] }) =>
  pulled.ok ? pulled.groups!.map((g) => g.uid) : [];

describe("pull by batch", () => {
  it("leases only the named batch and leaves the others ready, undelivered", async () => {
    const { feed, name } = isolatedFeed("by-batch");
    const a = await batchGroups(feed, uniqueId("A"), 2);
    const b = await batchGroups(feed, uniqueId("B"), 2);
    const pulled = await feed.pull({ max_groups: 10, batch_id: b[0]!.split(":")[0] }, 0);
    expect(uidsOf(pulled)).toEqual(b);
    expect(pulled.ok && pulled.groups.every((g) => g.batch_id === b[0]!.split(":")[0])).toBe(true);
    const states = await storedStates(name);
    for (const uid of a) expect(states[uid]).toEqual(["ready", null, 0]);
    for (const uid of b) expect(states[uid]?.[0]).toBe("leased");
  });

  it("takes a list of ids and a chunk prefix together, and never a group of no batch", async () => {
    const { feed } = isolatedFeed("by-list");
    const base = uniqueId("big");
    const chunk0 = await batchGroups(feed, `${base}.chunk0`, 1);
    const other = await batchGroups(feed, uniqueId("other"), 1);
    const chunk1 = await batchGroups(feed, `${base}.chunk1`, 1);
    const single = await batchGroups(feed, uniqueId("single"), 1);
    await ingestAll(feed, (await publishGroup(2)).messages);
    const pulled = await feed.pull(
      {
        max_groups: 10,
        batch_id: [base, single[0]!.split(":")[0]!],
        batch_prefix: `${base}.chunk`,
      },
      0,
    );
    expect(uidsOf(pulled).sort()).toEqual([...chunk0, ...chunk1, ...single].sort());
    expect(
      uidsOf(
        await feed.pull({ max_groups: 10, batch_id: [base], batch_prefix: `${base}.chunk` }, 0),
      ),
    ).toEqual([]);
    expect(uidsOf(await feed.pull({ max_groups: 10 }, 0))).toHaveLength(other.length + 1);
  });

  it("narrows by uid prefix, and counts max_groups over matching groups only", async () => {
    const { feed } = isolatedFeed("by-uid");
    const batch = uniqueId("U");
    await batchGroups(feed, uniqueId("first"), 3);
    const uids = await batchGroups(feed, batch, 3);
    expect(uidsOf(await feed.pull({ max_groups: 2, uid_prefix: `${batch}:` }, 0))).toEqual(
      uids.slice(0, 2),
    );
    expect(
      uidsOf(await feed.pull({ max_groups: 2, uid_prefix: `${batch}:`, batch_id: "nope" }, 0)),
    ).toEqual([]);
  });

  it("answers 422 naming a bad batch filter", async () => {
    const paths = async (body: unknown) =>
      (await expectProblem(await postJson("/v1/feed/pull", body), 422)).errors?.map((e) => e.path);
    expect(await paths({ max_groups: 1, batch_id: [] })).toEqual(["batch_id"]);
    expect(await paths({ max_groups: 1, batch_id: "has space" })).toEqual(["batch_id"]);
    expect(await paths({ max_groups: 1, batch_prefix: "" })).toEqual(["batch_prefix"]);
    expect(await paths({ max_groups: 1, uid_prefix: 3 })).toEqual(["uid_prefix"]);
  });
});

describe("storage", () => {
  it("adds the batch column to a feed stored before groups knew their batch", async () => {
    const { feed, name } = isolatedFeed("migrate");
    await feed.stats();
    const columns = await runInDurableObject(
      env.TRAINER_FEED.get(env.TRAINER_FEED.idFromName(name)),
      (_instance, state) => {
        const sql = state.storage.sql;
        sql.exec("DROP INDEX groups_batch");
        sql.exec("ALTER TABLE feed_groups DROP COLUMN batch_id");
        new FeedStorage(sql).migrate();
        return sql
          .exec<{ name: string }>("SELECT name FROM pragma_table_info('feed_groups')")
          .toArray()
          .map((c) => c.name);
      },
    );
    expect(columns).toContain("batch_id");
    const batch = uniqueId("M");
    await batchGroups(feed, batch, 1);
    expect(uidsOf(await feed.pull({ max_groups: 1, batch_id: batch }, 0))).toEqual([`${batch}:0`]);
  });
});

describe("stats by batch", () => {
  it("counts live groups per batch, narrowed by the query, with zeros for a named empty batch", async () => {
    const { feed } = isolatedFeed("stats");
    const a = uniqueId("SA");
    const b = uniqueId("SB");
    await batchGroups(feed, a, 2);
    await batchGroups(feed, b, 1);
    await ingestAll(
      feed,
      (await publishGroup(2, { uid: `${b}:9`, batch_id: b })).messages.slice(0, 1),
    );
    await feed.pull({ max_groups: 1, batch_id: a }, 0);
    expect((await feed.stats()).by_batch).toEqual({
      [a]: {
        pending_groups: 0,
        ready_groups: 1,
        leased_groups: 1,
        dropped_groups: 0,
        dropped_by_reason: {},
      },
      [b]: {
        pending_groups: 1,
        ready_groups: 1,
        leased_groups: 0,
        dropped_groups: 0,
        dropped_by_reason: {},
      },
    });
    expect((await feed.stats({ batch_id: [b, "empty"] })).by_batch).toEqual({
      [b]: {
        pending_groups: 1,
        ready_groups: 1,
        leased_groups: 0,
        dropped_groups: 0,
        dropped_by_reason: {},
      },
      empty: {
        pending_groups: 0,
        ready_groups: 0,
        leased_groups: 0,
        dropped_groups: 0,
        dropped_by_reason: {},
      },
    });
    expect(Object.keys((await feed.stats({ batch_prefix: a })).by_batch)).toEqual([a]);
  });

  it("reads repeated batch_id query parameters and refuses unknown ones with 422", async () => {
    const batch = uniqueId("Q");
    const stats = (await (
      await api(`/v1/feed/stats?batch_id=${batch}&batch_id=${batch}-2`)
    ).json()) as FeedStats;
    expect(Object.keys(stats.by_batch).sort()).toEqual([batch, `${batch}-2`].sort());
    expect((await expectProblem(await api("/v1/feed/stats?batch=x"), 422)).errors?.[0]?.path).toBe(
      "batch",
    );
    expect(
      (await expectProblem(await api("/v1/feed/stats?batch_id=a%20b"), 422)).errors?.[0]?.path,
    ).toBe("batch_id.0");
  });
});
