import { describe, expect, it } from "vitest";
import { readPackObject } from "../../../../src/runtime/feed/group-pack";
import {
  isCompactedPack,
  planCompaction,
  type CompactionCandidate,
} from "../../../../src/runtime/feed/pack-compaction";
import { planStreamedPull } from "../../../../src/runtime/feed/pack-spans";
import { ARROW_EOS, joinChunks } from "../../../../src/sink/formats/arrow/arrow-ipc";
import { decodeArrowStream } from "../../../../src/sink/formats/arrow/arrow-read";
import { columnsToSamples } from "../../../../src/sink/formats/sample-columns";
import { packedGroups, streamedBody } from "./pack-fixtures";

const limits = (minBytes: number, maxBytes = 1 << 30, maxReads = 256) => ({
  minBytes,
  maxBytes,
  maxReads,
});

/** Candidates in lease order: groups packed one per object, so each group is a read of its own. */
async function scattered(groups: number) {
  const packed = await packedGroups(groups, 2, 1, 1);
  const candidates: CompactionCandidate[] = packed.feedGroups.map((g) => ({
    uid: g.uid,
    batch_id: g.batch_id,
    ref: packed.refs[g.uid]!,
  }));
  return { ...packed, candidates };
}

describe("pack compaction", () => {
  it("rewrites a batch's scattered spans into one pack in lease order, which reads back as a pack and as a streamed pull", async () => {
    const { bucket, feedGroups, candidates } = await scattered(4);
    // Leased in another order than packed: the compacted pack follows the lease.
    const order = [2, 0, 3, 1].map((i) => candidates[i]!);
    const plan = planCompaction(order, () => "x", limits(1))!;
    expect(isCompactedPack(plan.key)).toBe(true);
    expect(plan.reads).toHaveLength(4);
    expect(plan.moves.map((m) => m.uid)).toEqual(["g2", "g0", "g3", "g1"]);
    // What the shard writes: the head, the spans copied in order, the end marker.
    const written = streamedBody(bucket.objects, plan.head, plan.reads);
    expect(written.length).toBe(plan.bytes);
    bucket.objects.set(plan.key, written);
    // The read-whole path takes it as a pack naming exactly these groups.
    const pack = readPackObject(written)!;
    expect([...pack.groups.keys()]).toEqual(["g2", "g0", "g3", "g1"]);
    // The streamed path: one read of the compacted pack, decoding to the same samples as the small packs.
    const refs = Object.fromEntries(plan.moves.map((m) => [m.uid, m.to]));
    const leased = [2, 0, 3, 1].map((i) => feedGroups[i]!);
    const compacted = planStreamedPull(leased, refs)!;
    expect(compacted.reads).toEqual([
      {
        key: plan.key,
        offset: plan.moves[0]!.to.span.offset,
        length: plan.bytes - plan.moves[0]!.to.span.offset - ARROW_EOS.length,
      },
    ]);
    const before = planStreamedPull(
      leased,
      Object.fromEntries(candidates.map((c) => [c.uid, c.ref])),
    )!;
    const decode = (reads: typeof before.reads) =>
      columnsToSamples(
        decodeArrowStream(
          joinChunks([
            ...plan.head,
            ...reads.map((r) => bucket.objects.get(r.key)!.subarray(r.offset, r.offset + r.length)),
            ARROW_EOS,
          ]),
        ),
      );
    expect(decode(compacted.reads)).toEqual(decode(before.reads));
  });

  it("waits for the threshold, needs two reads or more, and never compacts a compacted pack again", async () => {
    const { candidates } = await scattered(3);
    const bytes = candidates.reduce((n, c) => n + c.ref.span!.length, 0);
    expect(planCompaction(candidates, () => "x", limits(bytes + 1))).toBeNull();
    expect(planCompaction(candidates, () => "x", limits(bytes))!.moves).toHaveLength(3);
    expect(planCompaction(candidates.slice(0, 1), () => "x", limits(1))).toBeNull();
    const plan = planCompaction(candidates, () => "x", limits(1))!;
    const moved = candidates.map((c, i) => ({ ...c, ref: plan.moves[i]!.to }));
    expect(planCompaction(moved, () => "y", limits(1))).toBeNull();
  });

  it("keeps batches apart, and stops at the byte and read bounds (the first group always goes)", async () => {
    const a = await scattered(3);
    const b = await packedGroups(2, 2, 1, 1, "other");
    const mixed: CompactionCandidate[] = [
      a.candidates[0]!,
      ...b.feedGroups.map((g) => ({ uid: `b-${g.uid}`, batch_id: "other", ref: b.refs[g.uid]! })),
      ...a.candidates.slice(1),
    ];
    expect(planCompaction(mixed, () => "x", limits(1))!.moves.map((m) => m.uid)).toEqual([
      "g0",
      "g1",
      "g2",
    ]);
    const two = a.candidates[0]!.ref.span!.length + a.candidates[1]!.ref.span!.length;
    expect(planCompaction(a.candidates, () => "x", limits(1, two))!.moves).toHaveLength(2);
    expect(planCompaction(a.candidates, () => "x", limits(1, 1 << 30, 2))!.moves).toHaveLength(2);
    expect(planCompaction(a.candidates, () => "x", limits(1, 1))).toBeNull(); // one group per pack: a single read, nothing to gain
  });
});
