/**
 * @module Group packs: the GRPO groups one results-consumer batch completes are written once more,
 * together, as one Arrow object (`packs/<id>.arrow`: one record batch per group, every member's
 * rows in the feed's member order), so a pull reads a few large objects instead of one per member,
 * and an Arrow pull passes the groups' record batches through without decoding them. The object
 * names each group's members (rollout id and row count), so a pull uses a batch only for exactly
 * the group it leased; anything else falls back to the members' own objects, which stay the
 * source of truth. The feed shard keeps `uid → (key, index)` (pack-index.ts).
 */
import type { BlobStorePort, SizedBlobReader } from "../../ports";
import type { FeedMember } from "../../schemas/feed";
import type { ArrowTable } from "../../sink/formats/arrow/arrow-format";
import { ARROW_STREAM_MEDIA_TYPE } from "../../sink/formats/arrow/arrow-format";
import { splitArrowStream } from "../../sink/formats/arrow/arrow-frames";
import {
  ARROW_EOS,
  columnsSignature,
  encodeRecordBatchFrame,
  encodeSchemaFrame,
  joinChunks,
} from "../../sink/formats/arrow/arrow-ipc";
import type { Column } from "../../sink/formats/arrow/vectors";
import { groupPackKey, rolloutSamplesKey } from "../../sink/publication/r2-keys";
import type { PackRef, PackSpan } from "./pack-index";
import {
  concatSampleTables,
  readSampleTable,
  SAMPLE_COLUMNS,
  SAMPLE_TABLE_SCHEMA_VERSION,
  SAMPLE_TABLE_VERSION_KEY,
  sampleTableMetadata,
  withExtraFields,
} from "../../sink/formats/sample-columns";

/** Schema metadata key of the pack's group list: `[[uid, [[rollout_id, rows], …]], …]`, record batch order. */
export const GROUP_PACK_GROUPS_KEY = "edge_rollout.group_pack.groups";

/** R2 reads in flight at once while packing (an invocation may hold 6 outgoing connections). */
const PACK_READ_CONCURRENCY = 6;

/**
 * Flags the samples of a member whose rollout did not succeed for masking, with the keys the
 * sample builder uses (`failed`, `trainable`, `status`): a no-op for tables it wrote, a guard
 * for tables written some other way.
 */
export function flaggedTable(member: FeedMember, table: ArrowTable): ArrowTable {
  if (member.status === "succeeded") return table;
  return withExtraFields(table, (fields) => ({
    ...fields,
    failed: true,
    trainable: false,
    status: member.status,
  }));
}

type MemberRows = Array<[string, number]>;

/** One completed group: its uid and members (as the feed lists them). */
export interface CompletedGroup {
  uid: string;
  members: FeedMember[];
  /** The feed shard that holds it (where its pack ref goes). */
  shard?: string;
}

/** A group's rows as columns (null: a member's table is missing or unreadable, so no pack). */
async function groupColumns(
  reader: SizedBlobReader,
  members: FeedMember[],
): Promise<{ columns: Column[]; rows: MemberRows } | string> {
  const tables: Array<ArrowTable | null> = new Array(members.length);
  let next = 0;
  let missing: string | null = null;
  const worker = async (): Promise<void> => {
    while (next < members.length && missing === null) {
      const at = next++;
      const member = members[at]!;
      if (member.samples === 0) {
        tables[at] = null;
        continue;
      }
      const blob = await reader.get(rolloutSamplesKey(member.rollout_id));
      if (!blob) missing = `no sample table for ${member.rollout_id}`;
      else tables[at] = flaggedTable(member, readSampleTable(new Uint8Array(await blob.bytes())));
    }
  };
  try {
    await Promise.all(
      Array.from({ length: Math.min(PACK_READ_CONCURRENCY, members.length) }, worker),
    );
  } catch (error) {
    // A table this code cannot read (another layout version) leaves the group to the per-member path.
    return error instanceof Error ? error.message : String(error);
  }
  if (missing !== null) return missing;
  return {
    columns: concatSampleTables(tables.filter((t): t is ArrowTable => t !== null)),
    rows: members.map((m, i) => [m.rollout_id, tables[i]?.length ?? 0]),
  };
}

/**
 * Most member tables one consumer batch reads to pack its groups. Each read is a subrequest of the
 * consumer's invocation (1,000 per invocation in Cloudflare's older limits, 10,000 in the current
 * table), which it shares with ingestion (one per feed shard and tracker), confirmations (≤ 100),
 * the pack puts and `recordPacks`. A budget of reads, not of groups, because group sizes vary:
 * 50 groups of 64 would be 3,200 reads. A group that does not fit (even one larger than the whole
 * budget) stays unpacked and pulls read it member by member; smaller groups after it still fit.
 */
export const MAX_PACK_READS_PER_BATCH = 400;

/** Member tables a group's packing reads (members with no samples have none). */
function tablesToRead(group: CompletedGroup): number {
  return group.members.reduce((n, m) => n + (m.samples > 0 ? 1 : 0), 0);
}

/** What packing a consumer batch's completed groups did (for logs and benches). */
export interface PackingReport {
  refs: Array<{ uid: string } & PackRef>;
  objects: number;
  bytes: number;
  unpacked: number;
}

/**
 * Packs the groups a consumer batch completed into one object per column layout (almost always
 * one: a stream has one schema), reading each group's members PACK_READ_CONCURRENCY at once and at
 * most `readBudget` member tables in all (MAX_PACK_READS_PER_BATCH).
 * Never throws: a group that cannot be packed is left to the per-member path, always correct.
 */
export async function packCompletedGroups(
  reader: SizedBlobReader,
  blobs: BlobStorePort,
  groups: CompletedGroup[],
  newId: () => string = () => crypto.randomUUID(),
  readBudget: number = MAX_PACK_READS_PER_BATCH,
): Promise<PackingReport> {
  const report: PackingReport = { refs: [], objects: 0, bytes: 0, unpacked: 0 };
  const layouts = new Map<string, Array<{ uid: string; columns: Column[]; rows: MemberRows }>>();
  let budget = readBudget;
  let overBudget = 0;
  for (const group of groups) {
    const reads = tablesToRead(group);
    if (reads > budget) {
      overBudget += 1;
      continue;
    }
    budget -= reads;
    const read = await groupColumns(reader, group.members).catch((error: unknown) =>
      error instanceof Error ? error.message : String(error),
    );
    if (typeof read === "string") {
      report.unpacked += 1;
      console.warn("group left unpacked; pulls read its members", { uid: group.uid, reason: read });
      continue;
    }
    const signature = columnsSignature(read.columns);
    layouts.set(signature, [...(layouts.get(signature) ?? []), { uid: group.uid, ...read }]);
  }
  if (overBudget > 0) {
    report.unpacked += overBudget;
    console.warn("groups left unpacked past the batch's read budget; pulls read their members", {
      groups: overBudget,
      budget: readBudget,
    });
  }

  for (const packed of layouts.values()) {
    const key = groupPackKey(newId());
    const listed = JSON.stringify(packed.map((g) => [g.uid, g.rows]));
    const head = encodeSchemaFrame(
      packed[0]!.columns,
      sampleTableMetadata({ [GROUP_PACK_GROUPS_KEY]: listed }),
    );
    const frames = packed.map((g) => encodeRecordBatchFrame(g.columns));
    // Each group's byte span, so a pull can stream its batch with a range read.
    const signature = columnsSignature(packed[0]!.columns);
    let offset = head.reduce((n, c) => n + c.length, 0);
    const spans = frames.map((frame, i): PackSpan => {
      const length = frame.reduce((n, c) => n + c.length, 0);
      const span = { offset, length, signature, rows: packed[i]!.rows };
      offset += length;
      return span;
    });
    const bytes = joinChunks([...head, ...frames.flat(), ARROW_EOS]);
    try {
      await blobs.put(key, bytes.buffer as ArrayBuffer, ARROW_STREAM_MEDIA_TYPE);
    } catch (error) {
      report.unpacked += packed.length;
      console.warn("writing a group pack failed; pulls read its groups' members", {
        key,
        error: error instanceof Error ? error.message : String(error),
      });
      continue;
    }
    report.objects += 1;
    report.bytes += bytes.length;
    packed.forEach((g, index) => report.refs.push({ uid: g.uid, key, index, span: spans[index] }));
  }
  return report;
}

/** A group's rows as read from a pack: its record batch (framed), the columns that type it, each member's rows. */
export interface GroupPack {
  columns: Column[];
  signature: string;
  batch: Uint8Array;
  /** Rows of each member, in the group's member order. */
  rows: number[];
}

/** A pack object taken apart: its groups' record batches by uid, with the members each lists. */
export interface PackObject {
  columns: Column[];
  signature: string;
  groups: Map<string, { batch: Uint8Array; rows: MemberRows }>;
}

/** Splits a stored pack object (null if it is not a pack of this layout version). */
export function readPackObject(bytes: Uint8Array): PackObject | null {
  const frames = splitArrowStream(bytes);
  const listed = frames.metadata[GROUP_PACK_GROUPS_KEY];
  if (
    listed === undefined ||
    frames.metadata[SAMPLE_TABLE_VERSION_KEY] !== String(SAMPLE_TABLE_SCHEMA_VERSION)
  )
    return null;
  if (frames.columns.map((c) => c.name).join() !== SAMPLE_COLUMNS.join()) return null;
  const entries = JSON.parse(listed) as Array<[string, MemberRows]>;
  if (entries.length !== frames.batches.length) return null;
  return {
    columns: frames.columns,
    signature: frames.signature,
    groups: new Map(entries.map(([uid, rows], i) => [uid, { batch: frames.batches[i]!, rows }])),
  };
}

/**
 * The group's rows from a pack object if it lists exactly `members` (same rollout ids, same order)
 * with the rows they announced (`samples`), else null: the caller reads the members themselves.
 */
export function groupFromPack(
  pack: PackObject,
  uid: string,
  members: FeedMember[],
): GroupPack | null {
  const entry = pack.groups.get(uid);
  if (!entry || entry.rows.length !== members.length) return null;
  if (
    !members.every((m, i) => entry.rows[i]![0] === m.rollout_id && entry.rows[i]![1] === m.samples)
  )
    return null;
  return {
    columns: pack.columns,
    signature: pack.signature,
    batch: entry.batch,
    rows: members.map((m) => m.samples),
  };
}

/** A packed group as a stream of its own (the JSON pull decodes it). */
export function groupPackStream(pack: GroupPack): Uint8Array {
  return joinChunks([
    ...encodeSchemaFrame(pack.columns, sampleTableMetadata()),
    pack.batch,
    ARROW_EOS,
  ]);
}
