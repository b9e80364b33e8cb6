/**
 * Integration: group packs (issue 26 item 3). The results consumer writes a completed group's
 * samples once as one Arrow object; pulls read that one object per group (Arrow passes its record
 * batch through) and fall back to the members' own objects when there is no pack for exactly
 * the leased members.
 */
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { feedStub } from "../../functions/feed-stub";
import worker from "../../functions/worker";
import { PULL_METADATA_KEY, type ArrowPullMetadata } from "../../src/runtime/feed/arrow-pull";
import type { InlineFeedGroup, PullResponse } from "../../src/schemas/feed";
import type { ResultMessage } from "../../src/schemas/result-message";
import { ARROW_STREAM_MEDIA_TYPE } from "../../src/sink/arrow/arrow-format";
import { decodeArrowStream } from "../../src/sink/arrow/arrow-read";
import { rolloutRecordKey, rolloutSamplesKey } from "../../src/sink/r2-keys";
import { columnsToSamples } from "../../src/sink/sample-columns";
import { api, uniqueId } from "../fixtures/rollouts";
import { drainDefaultFeed, postJson } from "./feed-fixtures";
import { publishKinds, SAMPLE_KINDS } from "./sample-kinds-fixtures";

const K = SAMPLE_KINDS;

async function deliver(bodies: ResultMessage[]) {
  const batch = createMessageBatch("edge-rollout-results", bodies.map((body, i) => ({ id: `msg-${i}`, timestamp: new Date(), attempts: 1, body })));
  await worker.queue(batch as MessageBatch<unknown>, env);
  return getQueueResult(batch, createExecutionContext());
}

async function pullJson(batchId: string): Promise<PullResponse<InlineFeedGroup>> {
  return (await (await postJson("/v1/feed/pull", { max_groups: 10, inline: true, lease_ms: 1_000, batch_id: batchId })).json()) as PullResponse<InlineFeedGroup>;
}

/** An Arrow pull put back in the JSON pull's shape (`timing`: its Server-Timing, which says whether it was streamed from pack spans). */
async function pullArrow(batchId: string, seen: { timing?: string } = {}): Promise<InlineFeedGroup[]> {
  const response = await api("/v1/feed/pull", { method: "POST", headers: { "content-type": "application/json", accept: ARROW_STREAM_MEDIA_TYPE }, body: JSON.stringify({ max_groups: 10, lease_ms: 1_000, batch_id: batchId }) });
  seen.timing = response.headers.get("server-timing") ?? "";
  const table = decodeArrowStream(new Uint8Array(await response.arrayBuffer()));
  const meta = JSON.parse(table.metadata[PULL_METADATA_KEY]!) as ArrowPullMetadata;
  const samples = columnsToSamples(table);
  return meta.groups.map((g) => ({ ...g, members: g.members.map(({ first_sample, ...m }) => ({ ...m, samples: samples.slice(first_sample, first_sample + m.samples) })) }));
}

/** Pack object keys under `prefix` (the consumer names them by a fresh id). */
async function packKeys(prefix: string): Promise<string[]> {
  const listed = await env.TRAJECTORIES.list({ prefix: prefix === "pack/" ? "packs/" : prefix });
  return listed.objects.sort((a, b) => a.uploaded.getTime() - b.uploaded.getTime()).map((o) => o.key);
}

const lapse = () => new Promise((done) => setTimeout(done, 1_100));
const withoutDeliveries = (groups: InlineFeedGroup[]) => groups.map(({ deliveries: _d, ...g }) => g);

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
    for (const m of group.messages) await env.TRAJECTORIES.delete([rolloutSamplesKey(m.rollout_id), rolloutRecordKey(m.rollout_id)]);
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

  it("are ignored when they do not list exactly the leased members, and the members are read instead", async () => {
    const batchId = uniqueId("pack-stale");
    const packed = await publishKinds(batchId, [K.multi_turn!, K.drift!]);
    const other = await publishKinds(batchId, [K.missing_logprobs!, K.untrainable!]);
    await deliver(packed.messages);
    // `other` completes without the consumer (no pack of its own) and gets a ref to a pack that does not list it.
    for (const m of other.messages) await feedStub(env).ingest(m);
    const [key] = (await packKeys("packs/")).slice(-1);
    await feedStub(env).recordPacks([{ uid: other.uid, key: key!, index: 0 }]);
    const seen: { timing?: string } = {};
    const arrow = await pullArrow(batchId, seen);
    // One leased group has no span listing its members: the pull reads and re-encodes instead.
    expect(seen.timing).not.toContain("streamed");
    const byUid = new Map(arrow.map((g) => [g.uid, g]));
    expect(byUid.get(other.uid)!.members.map((m) => m.samples.map((s) => s.rollout_id))).toEqual(other.messages.map((m) => [m.rollout_id]));
    expect(byUid.get(packed.uid)!.members.map((m) => m.samples.length)).toEqual([1, 2]);
  });
});
