/**
 * Integration: the sharded trainer feed (issue 26 item 1) over real TrainerFeed objects. Groups
 * spread over shards by uid; concurrent pullers never lease a group twice; one lease id acks
 * across shards; an upgrade from the single "default" feed splits, loses and repeats no group;
 * an unreadable FEED_SHARDS is a 503 naming it on every feed route.
 */
import { objects } from "../../../../src/runtime/objects/object-directory";
import { createExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../../../functions/worker";
import type { FeedLayout } from "../../../../src/runtime/feed/feed-shards";
import { ShardedFeed, type FeedShardPort } from "../../../../src/runtime/feed/sharded-feed";
import type { ResultMessage } from "../../../../src/schemas/result-message";
import { uniqueId } from "../../../fixtures/rollouts";
import { publishGroup } from "../../fixtures/feed-fixtures";

function shardedFeed(layout: FeedLayout): ShardedFeed {
  return new ShardedFeed(
    layout,
    (name) => objects(env).feedShard(name) as unknown as FeedShardPort,
  );
}

function names(label: string, n: number): string[] {
  const base = uniqueId(label);
  return Array.from({ length: n }, (_, k) => `${base}-${k}`);
}

async function groups(
  count: number,
  size: number,
  batch = uniqueId("b"),
): Promise<ResultMessage[][]> {
  return Promise.all(
    Array.from(
      { length: count },
      async () => (await publishGroup(size, { batch_id: batch })).messages,
    ),
  );
}

describe("the sharded feed", () => {
  it("never leases a group twice to 8 concurrent pullers over 4 shards, and acks each lease across its shards", async () => {
    const feed = shardedFeed({ current: names("c8", 4), previous: [] });
    const made = await groups(24, 2);
    const { outcomes, requests } = await feed.ingestBatch(made.flat());
    expect(requests).toBeLessThanOrEqual(4);
    expect(outcomes.filter((o) => o.result.ok && o.result.outcome === "completed")).toHaveLength(
      24,
    );
    const leased: string[] = [];
    const leases: string[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (;;) {
          const pulled = await feed.pull({ max_groups: 2 }, 0);
          if (!pulled.ok || pulled.lease_id === null) return;
          leased.push(...pulled.groups.map((g) => g.uid));
          leases.push(pulled.lease_id);
        }
      }),
    );
    expect(leased.sort()).toEqual(made.map((g) => g[0]!.uid).sort());
    const acked = await Promise.all(leases.map((lease) => feed.ack(lease)));
    expect(acked.reduce((n, a) => n + (a.ok ? a.acked_groups : 0), 0)).toBe(24);
    const stats = await feed.stats();
    expect(stats).toMatchObject({
      ingested: 48,
      ready_groups: 0,
      leased_groups: 0,
      acked: 24,
      delivered: 24,
    });
  });

  it("puts every member of a group in one shard, and merges stats per batch and training mode", async () => {
    const layout = { current: names("spread", 4), previous: [] };
    const feed = shardedFeed(layout);
    const batch = uniqueId("spread");
    // Each rollout had one call cut by an interrupting sync at token 10 and resumed under version 4.
    const generation = {
      calls_interrupted: 1,
      calls_resumed: 1,
      tokens_by_policy_version: { "3": 10, "4": 5 },
    };
    const made = (await groups(12, 3, batch)).map((group) =>
      group.map((message) => ({ ...message, generation })),
    );
    await feed.ingestBatch(made.flat());
    await feed.ingestBatch(made[0]!); // redelivered: counted once
    const perShard = await Promise.all(
      layout.current.map((name) => objects(env).feedShard(name).stats()),
    );
    expect(perShard.filter((s) => s.ready_groups > 0).length).toBeGreaterThan(1);
    for (const s of perShard) expect(s.ingested).toBe(s.ready_groups * 3); // whole groups only
    const merged = await feed.stats({ batch_id: [batch] });
    expect(merged.by_batch[batch]).toMatchObject({ ready_groups: 12 });
    expect(merged.by_training_mode["verl/hybrid"]).toMatchObject({
      ingested: 36,
      ready_groups: 12,
      calls_interrupted: 36,
      calls_resumed: 36,
    });
    expect(merged.tokens_by_policy_version).toEqual({ "3": 360, "4": 180 });
  });

  it("upgrades from the single default feed without splitting, losing or repeating a group", async () => {
    const old = [uniqueId("old-default")];
    const before = shardedFeed({ current: old, previous: [] });
    const made = await groups(10, 2);
    // Before: every group's first member, the first two groups whole, one of them leased (an old-style lease id).
    await before.ingestBatch([...made.map((g) => g[0]!), made[0]![1]!, made[1]![1]!]);
    const legacy = await objects(env).feedShard(old[0]!).pull({ max_groups: 1 }, 0);
    expect(legacy.ok && legacy.lease_id).toMatch(/^lease-[^~]+$/);
    const after = shardedFeed({ current: names("new", 4), previous: old });
    const late = [...made.slice(2).map((g) => g[1]!), made[0]![1]!]; // the rest, and one redelivery
    const { outcomes } = await after.ingestBatch(late);
    expect(outcomes.every((o) => o.shard === old[0])).toBe(true); // the old object keeps what it started
    const fresh = await groups(4, 2);
    const { outcomes: newOnes } = await after.ingestBatch(fresh.flat());
    expect(newOnes.every((o) => o.shard !== old[0])).toBe(true);
    const pulled = await after.pull({ max_groups: 100 }, 0);
    if (!pulled.ok || !legacy.ok) throw new Error("pull refused");
    const uids = [...pulled.groups.map((g) => g.uid), ...legacy.groups.map((g) => g.uid)];
    expect(uids.sort()).toEqual([...made, ...fresh].map((g) => g[0]!.uid).sort());
    expect(pulled.groups.every((g) => g.members.length === 2)).toBe(true);
    expect(await after.ack(legacy.lease_id!)).toMatchObject({ ok: true, acked_groups: 1 });
    expect(await after.ack(pulled.lease_id!)).toMatchObject({ ok: true, acked_groups: 13 });
    expect(await after.stats()).toMatchObject({
      ready_groups: 0,
      leased_groups: 0,
      pending_groups: 0,
    });
  });

  it("answers every feed route with 503 problem+json naming FEED_SHARDS when it is not an integer 1..256", async () => {
    for (const [method, path] of [
      ["POST", "/v1/feed/pull"],
      ["POST", "/v1/feed/ack"],
      ["GET", "/v1/feed/stats"],
      ["GET", "/v1/feed/config"],
    ] as const) {
      const request = new Request(`http://local${path}`, {
        method,
        headers: { "content-type": "application/json" },
        body: method === "POST" ? JSON.stringify({ max_groups: 1, lease_id: "x" }) : undefined,
      });
      const response = await worker.fetch(
        request,
        { ...env, FEED_SHARDS: "0" },
        createExecutionContext(),
      );
      expect([path, response.status, response.headers.get("content-type")]).toEqual([
        path,
        503,
        "application/problem+json",
      ]);
      expect(((await response.json()) as { errors: Array<{ path: string }> }).errors[0]!.path).toBe(
        "FEED_SHARDS",
      );
    }
  });
});
