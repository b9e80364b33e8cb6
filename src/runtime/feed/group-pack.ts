/**
 * @module Group packs: when a GRPO group completes, its members' sample tables are written once
 * more as one Arrow object (`groups/<uid>/samples.arrow`), so a pull reads one object per group
 * instead of one per member, and an Arrow pull passes its record batch through without decoding
 * it. The pack names its members (rollout id and row count, in the feed's member order), so a
 * pull uses it only for exactly the group it leased; anything else falls back to the members'
 * own objects, which stay the source of truth.
 */
import type { BlobStorePort, SizedBlobReader } from "../../ports";
import type { FeedMember } from "../../schemas/feed";
import type { ArrowTable } from "../../sink/arrow/arrow-format";
import { ARROW_STREAM_MEDIA_TYPE } from "../../sink/arrow/arrow-format";
import { splitArrowStream, type ArrowFrames } from "../../sink/arrow/arrow-frames";
import { encodeArrowStream } from "../../sink/arrow/arrow-ipc";
import { groupSamplesKey, rolloutSamplesKey } from "../../sink/r2-keys";
import { concatSampleTables, readSampleTable, SAMPLE_COLUMNS, SAMPLE_TABLE_SCHEMA_VERSION, SAMPLE_TABLE_VERSION_KEY, sampleTableMetadata, withExtraFields } from "../../sink/sample-columns";

/** Schema metadata key of the pack's member list: `[[rollout_id, rows], …]` in member order. */
export const GROUP_PACK_MEMBERS_KEY = "edge_rollout.group_pack.members";

/** R2 reads in flight at once while packing (an invocation may hold 6 outgoing connections). */
const PACK_READ_CONCURRENCY = 6;

/**
 * Flags the samples of a member whose rollout did not succeed for masking, with the keys the
 * sample builder uses (`failed`, `trainable`, `status`): a no-op for tables it wrote, a guard
 * for tables written some other way.
 */
export function flaggedTable(member: FeedMember, table: ArrowTable): ArrowTable {
  if (member.status === "succeeded") return table;
  return withExtraFields(table, (fields) => ({ ...fields, failed: true, trainable: false, status: member.status }));
}

/** The member list a pack carries, as its metadata value. */
function memberList(members: Array<{ rollout_id: string; rows: number }>): string {
  return JSON.stringify(members.map((m) => [m.rollout_id, m.rows]));
}

/** What packing a group did. */
export type PackOutcome = { packed: true; bytes: number; rows: number } | { packed: false; reason: string };

/**
 * Reads the members' sample tables, flags failed members' rows, and writes them as one stream at
 * `groupSamplesKey(uid)` (idempotent: same members, same bytes). A member with samples but no
 * sample table (published before they existed) leaves the group unpacked: pulls read it per member.
 */
export async function writeGroupPack(reader: SizedBlobReader, blobs: BlobStorePort, uid: string, members: FeedMember[]): Promise<PackOutcome> {
  const tables: Array<ArrowTable | null | string> = new Array(members.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < members.length) {
      const at = next++;
      const member = members[at]!;
      if (member.samples === 0) {
        tables[at] = null;
        continue;
      }
      const blob = await reader.get(rolloutSamplesKey(member.rollout_id));
      tables[at] = blob ? flaggedTable(member, readSampleTable(new Uint8Array(await blob.bytes()))) : `no sample table for ${member.rollout_id}`;
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(PACK_READ_CONCURRENCY, members.length) }, worker));
  } catch (error) {
    // A table this code cannot read (another layout version) leaves the group to the per-member path.
    return { packed: false, reason: error instanceof Error ? error.message : String(error) };
  }
  const missing = tables.find((t): t is string => typeof t === "string");
  if (missing) return { packed: false, reason: missing };
  const present = tables.filter((t): t is ArrowTable => t !== null);
  const listed = members.map((m, i) => ({ rollout_id: m.rollout_id, rows: (tables[i] as ArrowTable | null)?.length ?? 0 }));
  const bytes = encodeArrowStream(concatSampleTables(present), sampleTableMetadata({ [GROUP_PACK_MEMBERS_KEY]: memberList(listed) }));
  await blobs.put(groupSamplesKey(uid), bytes.buffer as ArrayBuffer, ARROW_STREAM_MEDIA_TYPE);
  return { packed: true, bytes: bytes.length, rows: present.reduce((n, t) => n + t.length, 0) };
}

/** A pack read for a pulled group: its bytes taken apart, and each member's rows. */
export interface GroupPack {
  frames: ArrowFrames;
  /** The whole stored stream (JSON pulls decode it). */
  bytes: Uint8Array;
  /** Rows of each member, in the group's member order. */
  rows: number[];
}

/**
 * The pack's parts if it holds exactly `members` (same rollout ids in the same order) with the
 * rows they announced (`samples`), else null: the caller reads the members themselves.
 */
export function matchGroupPack(bytes: Uint8Array, members: FeedMember[]): GroupPack | null {
  const frames = splitArrowStream(bytes);
  const listed = frames.metadata[GROUP_PACK_MEMBERS_KEY];
  if (listed === undefined || frames.metadata[SAMPLE_TABLE_VERSION_KEY] !== String(SAMPLE_TABLE_SCHEMA_VERSION)) return null;
  if (frames.columns.map((c) => c.name).join() !== SAMPLE_COLUMNS.join()) return null;
  const expected = memberList(members.map((m) => ({ rollout_id: m.rollout_id, rows: m.samples })));
  if (listed !== expected) return null;
  return { frames, bytes, rows: members.map((m) => m.samples) };
}

/**
 * Most groups one consumer batch packs. Each costs its members' reads and one write, all
 * subrequests of the consumer's invocation (1,000 on the Paid plan): 50 groups of 8 are 450.
 * A group past it stays unpacked and is read member by member.
 */
export const MAX_PACKS_PER_BATCH = 50;

/** What packing a consumer batch's completed groups did (for logs and benches). */
export interface PackingReport {
  packed: number;
  unpacked: number;
  bytes: number;
  ms: number;
}

/**
 * Packs the groups a consumer batch completed, one group at a time (each reads its members
 * PACK_READ_CONCURRENCY at once). Never throws: a group that could not be packed is logged and
 * left to the per-member path, which is always correct.
 */
export async function packCompletedGroups(reader: SizedBlobReader, blobs: BlobStorePort, groups: Array<{ uid: string; members: FeedMember[] }>): Promise<PackingReport> {
  const started = Date.now();
  const report: PackingReport = { packed: 0, unpacked: 0, bytes: 0, ms: 0 };
  for (const [index, group] of groups.entries()) {
    if (index >= MAX_PACKS_PER_BATCH) {
      report.unpacked += groups.length - index;
      break;
    }
    try {
      const outcome = await writeGroupPack(reader, blobs, group.uid, group.members);
      if (outcome.packed) {
        report.packed += 1;
        report.bytes += outcome.bytes;
      } else {
        report.unpacked += 1;
        console.warn("group left unpacked", { uid: group.uid, reason: outcome.reason });
      }
    } catch (error) {
      report.unpacked += 1;
      console.warn("packing a group failed; pulls read its members", { uid: group.uid, error: error instanceof Error ? error.message : String(error) });
    }
  }
  report.ms = Date.now() - started;
  return report;
}
