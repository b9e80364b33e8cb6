/**
 * Integration: group packs (issue 26 item 3). The results consumer writes a completed group's
 * samples once as one Arrow object; pulls read that one object per group (Arrow passes its record
 * batch through) and fall back to the members' own objects when there is no pack for exactly
 * the leased members. A shard compacts a batch's small packs into one, in lease order, so a pull
 * streams few range reads.
 */
import { objects } from "../../../../src/runtime/objects/object-directory";
import { overviewView } from "../../../../functions/views/overview-view";
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import worker from "../../../../functions/worker";
import { PULL_METADATA_KEY, type ArrowPullMetadata } from "../../../../src/schemas/pull-metadata";
import {
  DEFAULT_PACK_COMPACTION_MIN_BYTES,
  type InlineFeedGroup,
  type PullResponse,
} from "../../../../src/schemas/feed";
import type { ResultMessage } from "../../../../src/schemas/result-message";
import { ARROW_STREAM_MEDIA_TYPE } from "../../../../src/sink/formats/arrow/arrow-format";
import { decodeArrowStream } from "../../../../src/sink/formats/arrow/arrow-read";
import { rolloutRecordKey, rolloutSamplesKey } from "../../../../src/sink/publication/r2-keys";
import { columnsToSamples } from "../../../../src/sink/formats/sample-columns";
import { api, uniqueId } from "../../../fixtures/rollouts";
import { drainDefaultFeed, postJson } from "../../fixtures/feed-fixtures";
import { publishKinds, SAMPLE_KINDS } from "./sample-kinds-fixtures";

const K = SAMPLE_KINDS;

async function deliver(bodies: ResultMessage[]) {
  const batch = createMessageBatch(
    "edge-rollout-results",
    bodies.map((body, i) => ({ id: `msg-${i}`, timestamp: new Date(), attempts: 1, body })),
  );
  await worker.queue(batch as MessageBatch<unknown>, env);
  return getQueueResult(batch, createExecutionContext());
}

async function pullJson(batchId: string): Promise<PullResponse<InlineFeedGroup>> {
  return (await (
    await postJson("/v1/feed/pull", {
      max_groups: 10,
      inline: true,
      lease_ms: 1_000,
      batch_id: batchId,
    })
  ).json()) as PullResponse<InlineFeedGroup>;
}

/** An Arrow pull put back in the JSON pull's shape (`timing`: its Server-Timing, which says whether it was streamed from pack spans). */
async function pullArrow(
  batchId: string,
  seen: { timing?: string } = {},
): Promise<InlineFeedGroup[]> {
  const response = await api("/v1/feed/pull", {
    method: "POST",
    headers: { "content-type": "application/json", accept: ARROW_STREAM_MEDIA_TYPE },
    body: JSON.stringify({ max_groups: 10, lease_ms: 1_000, batch_id: batchId }),
  });
  seen.timing = response.headers.get("server-timing") ?? "";
  const table = decodeArrowStream(new Uint8Array(await response.arrayBuffer()));
  const meta = JSON.parse(table.metadata[PULL_METADATA_KEY]!) as ArrowPullMetadata;
  const samples = columnsToSamples(table);
  return meta.groups.map((g) => ({
    ...g,
    members: g.members.map(({ first_sample, ...m }) => ({
      ...m,
      samples: samples.slice(first_sample, first_sample + m.samples),
    })),
  }));
}

/** Pack object keys under `prefix` (the consumer names them by a fresh id). */
async function packKeys(prefix: string): Promise<string[]> {
  const listed = await env.TRAJECTORIES.list({ prefix: prefix === "pack/" ? "packs/" : prefix });
  return listed.objects
    .sort((a, b) => a.uploaded.getTime() - b.uploaded.getTime())
    .map((o) => o.key);
}

const lapse = () => new Promise((done) => setTimeout(done, 1_100));

async function setCompactionThreshold(bytes: number): Promise<void> {
  const response = await api("/v1/feed/config", {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ pack_compaction_min_bytes: bytes }),
  });
  expect(response.status).toBe(200);
}

/** Waits until a compacted pack (`packs/c-…`) other than `known` exists; its refs move as its write ends. */
async function compactedPack(known: string[]): Promise<string> {
  for (let waited = 0; waited < 8_000; waited += 25) {
    const fresh = (await packKeys("packs/c-")).filter((k) => !known.includes(k));
    if (fresh.length > 0) {
      await new Promise((done) => setTimeout(done, 50));
      return fresh[0]!;
    }
    await new Promise((done) => setTimeout(done, 25));
  }
  throw new Error("no compacted pack within 8 s");
}
const withoutDeliveries = (groups: InlineFeedGroup[]) =>
  groups.map(({ deliveries: _d, ...g }) => g);

describe("group packs", () => {
  beforeEach(drainDefaultFeed);

  it("are written by the consumer when a group completes, and serve pulls once the members' objects are gone", async () => {
    const batchId = uniqueId("pack");
    const keysBefore = await packKeys("pack/");
    const group = await publishKinds(batchId, [K.multi_turn!, K.drift!, K.failed!, K.no_sample!]);
    const before = await deliver(group.messages.slice(0, 3));
    expect(before.explicitAcks).toHaveLength(3);
    expect(await packKeys("pack/")).toEqual(keysBefore); // not complete yet: nothing packed
    await deliver(group.messages.slice(3));
    expect((await packKeys("pack/")).length).toBe(keysBefore.length + 1);
    const json = await pullJson(batchId);
    await lapse();
    // Only the pack is left to read: a pull that still answers read it.
    for (const m of group.messages)
      await env.TRAJECTORIES.delete([
        rolloutSamplesKey(m.rollout_id),
        rolloutRecordKey(m.rollout_id),
      ]);
    const seen: { timing?: string } = {};
    const arrow = await pullArrow(batchId, seen);
    // Streamed from the pack's byte span (a range read piped through), and equal to the decoded JSON pull.
    expect(seen.timing).toContain("streamed");
    expect(withoutDeliveries(arrow)).toEqual(withoutDeliveries(json.groups));
    const members = json.groups[0]!.members;
    expect(members.map((m) => m.samples.length)).toEqual([1, 2, 1, 0]);
    expect(members[2]!.samples[0]!.extra_fields).toMatchObject({ failed: true, trainable: false });
    expect(members.every((m) => m.record_error === undefined)).toBe(true);
  });

  it("are compacted in lease order once a batch's small packs pass the shard's threshold, and pulls then stream the compacted pack", async () => {
    const batchId = uniqueId("pack-compact");
    const compactedBefore = await packKeys("packs/c-");
    await setCompactionThreshold(1);
    try {
      const smallBefore = await packKeys("pack/");
      // Groups of one column layout (a streamed pull needs one schema; other kinds may add columns).
      const groups = [
        await publishKinds(batchId, [K.multi_turn!, K.drift!]),
        await publishKinds(batchId, [K.drift!, K.multi_turn!]),
        await publishKinds(batchId, [K.multi_turn!, K.multi_turn!]),
      ];
      // One consumer batch per group: three small packs. The second one's record makes two reads of
      // this batch's groups, so the shard compacts those two; the third stays alone (one read).
      for (const group of groups) await deliver(group.messages);
      const key = await compactedPack(compactedBefore);
      const small = (await packKeys("pack/")).filter(
        (k) => !smallBefore.includes(k) && !k.startsWith("packs/c-"),
      );
      expect(small).toHaveLength(3);
      const json = await pullJson(batchId);
      expect(json.groups.map((g) => g.uid)).toEqual(groups.map((g) => g.uid));
      await lapse();
      // The first two groups' small packs and every member's objects are gone: only the compacted pack holds them.
      await env.TRAJECTORIES.delete(small.slice(0, 2));
      for (const m of groups.flatMap((g) => g.messages))
        await env.TRAJECTORIES.delete([
          rolloutSamplesKey(m.rollout_id),
          rolloutRecordKey(m.rollout_id),
        ]);
      const seen: { timing?: string } = {};
      const arrow = await pullArrow(batchId, seen);
      expect(seen.timing).toContain("streamed");
      expect(seen.timing).toContain('desc="2 reads"');
      expect(withoutDeliveries(arrow)).toEqual(withoutDeliveries(json.groups));
      await lapse();
      // The JSON pull reads the compacted pack whole (by record batch index): the same samples.
      expect(withoutDeliveries((await pullJson(batchId)).groups)).toEqual(
        withoutDeliveries(json.groups),
      );
      expect((await env.TRAJECTORIES.head(key))!.size).toBeGreaterThan(0);
    } finally {
      await setCompactionThreshold(DEFAULT_PACK_COMPACTION_MIN_BYTES);
    }
  });

  it("below the threshold are compacted once packs stop coming (a batch's tail), into one read", async () => {
    const batchId = uniqueId("pack-tail");
    const compactedBefore = await packKeys("packs/c-");
    const groups = [
      await publishKinds(batchId, [K.multi_turn!, K.drift!]),
      await publishKinds(batchId, [K.drift!, K.multi_turn!]),
    ];
    for (const group of groups) await deliver(group.messages);
    // Far below the default 8 MiB: nothing is compacted until the shard has seen no pack for QUIET_COMPACTION_MS.
    expect((await packKeys("packs/c-")).filter((k) => !compactedBefore.includes(k))).toEqual([]);
    await compactedPack(compactedBefore);
    const seen: { timing?: string } = {};
    const arrow = await pullArrow(batchId, seen);
    expect(seen.timing).toContain('desc="1 reads"');
    expect(arrow.map((g) => g.uid)).toEqual(groups.map((g) => g.uid));
  });

  it("are ignored when they do not list exactly the leased members, and the members are read instead", async () => {
    const batchId = uniqueId("pack-stale");
    const packed = await publishKinds(batchId, [K.multi_turn!, K.drift!]);
    const other = await publishKinds(batchId, [K.missing_logprobs!, K.untrainable!]);
    await deliver(packed.messages);
    // `other` completes without the consumer (no pack of its own) and gets a ref to a pack that does not list it.
    for (const m of other.messages) await objects(env).feedShard().ingest(m);
    const [key] = (await packKeys("packs/")).slice(-1);
    await objects(env)
      .feedShard()
      .recordPacks([{ uid: other.uid, key: key!, index: 0 }]);
    const seen: { timing?: string } = {};
    const arrow = await pullArrow(batchId, seen);
    // One leased group has no span listing its members: the pull reads and re-encodes instead.
    expect(seen.timing).not.toContain("streamed");
    const byUid = new Map(arrow.map((g) => [g.uid, g]));
    expect(byUid.get(other.uid)!.members.map((m) => m.samples.map((s) => s.rollout_id))).toEqual(
      other.messages.map((m) => [m.rollout_id]),
    );
    expect(byUid.get(packed.uid)!.members.map((m) => m.samples.length)).toEqual([1, 2]);
  });

  it("over the caller's max_bytes (4 shards) hand the groups that do not fit back first in line, and the next pull streams them", async () => {
    const sharded = { ...env, FEED_SHARDS: "4" };
    const batchId = uniqueId("pack-bytes");
    const groups = [];
    for (let g = 0; g < 3; g++) groups.push(await publishKinds(batchId, [K.multi_turn!, K.drift!]));
    for (const group of groups) {
      const batch = createMessageBatch(
        "edge-rollout-results",
        group.messages.map((body, i) => ({
          id: `msg-${i}`,
          timestamp: new Date(),
          attempts: 1,
          body,
        })),
      );
      await worker.queue(batch as MessageBatch<unknown>, sharded);
      await getQueueResult(batch, createExecutionContext());
    }
    // The dashboard's overview counts every shard's groups, not the default shard's alone.
    expect((await overviewView(sharded)).feed.by_batch[batchId]).toMatchObject({ ready_groups: 3 });
    const pull = async (body: Record<string, unknown>) => {
      const request = new Request("http://edge/v1/feed/pull", {
        method: "POST",
        headers: { "content-type": "application/json", accept: ARROW_STREAM_MEDIA_TYPE },
        body: JSON.stringify({ lease_ms: 30_000, batch_id: batchId, ...body }),
      });
      const response = await worker.fetch(request, sharded, createExecutionContext());
      expect(response.status).toBe(200);
      const timing = response.headers.get("server-timing") ?? "";
      const table = decodeArrowStream(new Uint8Array(await response.arrayBuffer()));
      return {
        meta: JSON.parse(table.metadata[PULL_METADATA_KEY]!) as ArrowPullMetadata,
        rows: columnsToSamples(table).length,
        timing,
      };
    };
    // A budget of one byte: the first group always goes, the other two go back at once.
    const first = await pull({ max_groups: 10, max_bytes: 1 });
    expect(first.timing).toContain("streamed");
    expect([first.meta.groups.length, first.meta.returned_groups, first.rows]).toEqual([1, 2, 3]);
    const second = await pull({ max_groups: 10 });
    expect(second.timing).toContain("streamed");
    expect(second.meta.groups.map((g) => g.uid).sort()).toEqual(
      groups
        .map((g) => g.uid)
        .filter((uid) => uid !== first.meta.groups[0]!.uid)
        .sort(),
    );
    expect([
      second.meta.returned_groups,
      second.rows,
      second.meta.groups.every((g) => g.deliveries === 1),
    ]).toEqual([0, 6, true]);
    expect((await pull({ max_groups: 10 })).meta.groups).toEqual([]);
  });

  it("over the caller's max_bytes in a JSON pull (read whole) hand the groups that do not fit back as well", async () => {
    const batchId = uniqueId("pack-bytes-json");
    const groups = [];
    for (let g = 0; g < 3; g++) groups.push(await publishKinds(batchId, [K.multi_turn!, K.drift!]));
    for (const group of groups) await deliver(group.messages);
    const pull = async (maxBytes?: number) =>
      (await (
        await postJson("/v1/feed/pull", {
          max_groups: 10,
          inline: true,
          lease_ms: 30_000,
          batch_id: batchId,
          ...(maxBytes ? { max_bytes: maxBytes } : {}),
        })
      ).json()) as PullResponse<InlineFeedGroup> & { returned_groups: number };
    const first = await pull(1);
    expect([
      first.groups.length,
      first.returned_groups,
      first.groups[0]!.members.map((m) => m.samples.length),
    ]).toEqual([1, 2, [1, 2]]);
    const second = await pull();
    expect([second.groups.length, second.returned_groups]).toEqual([2, 0]);
    expect([...first.groups, ...second.groups].map((g) => g.uid).sort()).toEqual(
      groups.map((g) => g.uid).sort(),
    );
  });

  it("answer a max_bytes that is not a positive integer with 422 naming it, leasing nothing", async () => {
    const response = await postJson("/v1/feed/pull", { max_groups: 1, inline: true, max_bytes: 0 });
    expect(response.status).toBe(422);
    expect(
      ((await response.json()) as { errors: Array<{ path: string }> }).errors.map((e) => e.path),
    ).toContain("max_bytes");
  });
});
