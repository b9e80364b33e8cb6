import { describe, expect, it, vi } from "vitest";
import {
  MAX_PACK_READS_PER_BATCH,
  packCompletedGroups,
  readPackObject,
  type CompletedGroup,
} from "../../../../src/runtime/feed/group-pack";
import type { SizedBlobReader } from "../../../../src/ports";
import { memoryBucket, storedMembers } from "./pack-fixtures";

/** Groups of the given sizes, their members' tables stored, as the consumer hands them over. */
async function storedGroups(
  bucket: ReturnType<typeof memoryBucket>,
  sizes: number[],
): Promise<CompletedGroup[]> {
  const groups: CompletedGroup[] = [];
  for (const [g, size] of sizes.entries())
    groups.push({ uid: `g${g}`, members: await storedMembers(bucket, `g${g}`, size, 1, () => 3) });
  return groups;
}

/** The bucket's reader, counting its reads. */
function counted(reader: SizedBlobReader): { reader: SizedBlobReader; reads: () => number } {
  let reads = 0;
  return {
    reader: { get: (key) => ((reads += 1), reader.get(key)) },
    reads: () => reads,
  };
}

describe("packing a consumer batch's groups within its read budget (unit)", () => {
  it("packs groups while their member reads fit the budget and leaves the rest to the per-member path", async () => {
    vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const bucket = memoryBucket();
    // 64 + 64 fit in 150; the third 64 does not; the group of 8 after it still does.
    const groups = await storedGroups(bucket, [64, 64, 64, 8]);
    const { reader, reads } = counted(bucket.reader);
    const report = await packCompletedGroups(reader, bucket.blobs, groups, () => "p", 150);
    expect(reads()).toBe(136);
    expect(report.unpacked).toBe(1);
    expect(report.refs.map((r) => r.uid)).toEqual(["g0", "g1", "g3"]);
    const pack = readPackObject(bucket.objects.get(report.refs[0]!.key)!);
    expect([...pack!.groups.keys()]).toEqual(["g0", "g1", "g3"]);
  });

  it("reads nothing for a group larger than the whole budget", async () => {
    vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const bucket = memoryBucket();
    const groups = await storedGroups(bucket, [MAX_PACK_READS_PER_BATCH + 1]);
    const { reader, reads } = counted(bucket.reader);
    const report = await packCompletedGroups(reader, bucket.blobs, groups);
    expect(reads()).toBe(0);
    expect(report).toMatchObject({ refs: [], objects: 0, unpacked: 1 });
  });
});
