import { describe, expect, it } from "vitest";
import { encodeStreamedPullHead } from "../../../../src/runtime/feed/arrow-pull";
import { columnsOfSignature, planStreamedPull } from "../../../../src/runtime/feed/pack-spans";
import {
  columnsSignature,
  encodeSchemaFrame,
  joinChunks,
} from "../../../../src/sink/formats/arrow/arrow-ipc";
import { PULL_METADATA_KEY, type ArrowPullMetadata } from "../../../../src/schemas/pull-metadata";
import { decodeArrowStream } from "../../../../src/sink/formats/arrow/arrow-read";
import {
  columnsToSamples,
  samplesToColumns,
  sampleTableMetadata,
} from "../../../../src/sink/formats/sample-columns";
import { packedGroups, sample, streamedBody } from "./pack-fixtures";

describe("streamed Arrow pulls from pack byte spans", () => {
  it("rebuilds a schema from its signature byte for byte, for every column type a sample table uses", () => {
    const wide = samplesToColumns([sample("g", 0, 0, 3)]).map((c) =>
      c.name === "response_ids"
        ? {
            ...c,
            vector: {
              type: "list" as const,
              offsets: Int32Array.of(0, 1),
              child: { type: "int64" as const, values: Float64Array.of(2 ** 40) },
            },
          }
        : c,
    );
    for (const columns of [samplesToColumns([sample("g", 0, 0, 3)]), wide]) {
      const standIns = columnsOfSignature(columnsSignature(columns))!;
      expect(joinChunks(encodeSchemaFrame(standIns, sampleTableMetadata({ x: "1" })))).toEqual(
        joinChunks(encodeSchemaFrame(columns, sampleTableMetadata({ x: "1" }))),
      );
    }
    expect(columnsOfSignature("a:int32,b:decimal")).toBeNull();
  });

  it("streams groups from several packs, in any lease order, as one stream whose metadata names every member's rows", async () => {
    const { bucket, feedGroups, refs } = await packedGroups(7, 3, 2, 3);
    // Packs p0 (g0-g2), p3 (g3-g5), p6 (g6): groups leased one after another from a pack are one read.
    const inOrder = planStreamedPull(
      [0, 1, 2, 4, 5, 6].map((g) => feedGroups[g]!),
      refs,
    )!;
    expect(inOrder.reads.map((r) => r.key)).toEqual([
      "packs/p0.arrow",
      "packs/p3.arrow",
      "packs/p6.arrow",
    ]);
    // Any other lease order is kept (the JSON pull's order): one read per run of adjacent spans.
    const leased = [
      feedGroups[5]!,
      feedGroups[0]!,
      feedGroups[1]!,
      feedGroups[2]!,
      feedGroups[6]!,
      feedGroups[4]!,
    ];
    const plan = planStreamedPull(leased, refs)!;
    expect(plan.groups.map((g) => g.group.uid)).toEqual(leased.map((g) => g.uid));
    expect(plan.reads.map((r) => r.key)).toEqual([
      "packs/p3.arrow",
      "packs/p0.arrow",
      "packs/p6.arrow",
      "packs/p3.arrow",
    ]);
    expect(plan.returned).toEqual([]);
    const table = decodeArrowStream(
      streamedBody(
        bucket.objects,
        encodeStreamedPullHead(
          { lease_id: "l", lease_expires_at: 1, policy_version: 1, dropped_stale: 0 } as never,
          plan,
        ),
        plan.reads,
      ),
    );
    const meta = JSON.parse(table.metadata[PULL_METADATA_KEY]!) as ArrowPullMetadata;
    const samples = columnsToSamples(table);
    expect(meta.samples).toBe(6 * 3 * 2);
    expect(samples).toHaveLength(meta.samples);
    expect(meta.groups.map((g) => g.uid)).toEqual(leased.map((g) => g.uid));
    for (const group of meta.groups) {
      for (const member of group.members) {
        const rows = samples.slice(member.first_sample, member.first_sample + member.samples);
        expect(rows.map((s) => [s.rollout_id, s.segment_index])).toEqual([
          [member.rollout_id, 0],
          [member.rollout_id, 1],
        ]);
      }
    }
  });

  it("hands back the groups past its byte budget (never the first) and reads nothing when a span does not list the leased members", async () => {
    const { feedGroups, refs } = await packedGroups(4, 2, 1, 4);
    const plan = planStreamedPull(feedGroups, refs, 1)!;
    expect(plan.groups.map((g) => g.group.uid)).toEqual(["g0"]);
    expect(plan.returned).toEqual(["g1", "g2", "g3"]);
    const changed = { ...feedGroups[1]!, members: feedGroups[1]!.members.slice(0, 1) };
    expect(planStreamedPull([feedGroups[0]!, changed], refs)).toBeNull();
    expect(planStreamedPull([feedGroups[0]!], { g0: { key: refs.g0!.key, index: 0 } })).toBeNull();
  });
});
