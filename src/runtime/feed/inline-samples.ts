/**
 * @module Reading pulled groups' training samples from R2 (`inline: true`, and every Arrow pull).
 * Done by the Worker route, not the feed object, so the object's single thread never waits on R2.
 * A group's samples come from its pack (`packs/<id>.arrow`, written when it completed with the
 * other groups its consumer batch completed: one read per pack object, however many of the
 * pull's groups it holds); a group without one is read member by member from their sample tables
 * (`rollouts/<id>/samples.arrow`, written at publication), and a rollout published before sample
 * tables existed from its record. What one pull may cost is bounded: objects read (each R2 read
 * is a subrequest, and an invocation gets a bounded number of them), and bytes read (an isolate
 * has 128 MB).
 */
import { describeError } from "../../errors";
import type { SizedBlobReader } from "../../ports";
import type { FeedGroup, FeedMember, InlineFeedGroup } from "../../schemas/feed";
import type { TrainingSample } from "../../schemas/training-sample";
import type { ArrowTable } from "../../sink/formats/arrow/arrow-format";
import { rolloutSamplesKey } from "../../sink/publication/r2-keys";
import { RolloutRecord } from "../../sink/publication/rollout-record";
import {
  columnsToSamples,
  readSampleTable,
  samplesToColumns,
  sampleTableMetadata,
} from "../../sink/formats/sample-columns";
import {
  flaggedTable,
  groupFromPack,
  groupPackStream,
  readPackObject,
  type GroupPack,
  type PackObject,
} from "./group-pack";
import type { PackRef } from "./pack-index";

/**
 * R2 reads in flight at once: a Worker invocation may hold 6 simultaneous outgoing connections,
 * and R2 calls count towards them.
 */
export const INLINE_READ_CONCURRENCY = 6;
/**
 * Most groups one inline pull leases: each costs at most one read of a pack object. Every read
 * is a subrequest, and an invocation gets a bounded number (1,000 on the Paid plan).
 */
export const MAX_INLINE_GROUPS = 256;
/**
 * Most members one inline pull leases (the feed stops leasing at this many; the first group is
 * always leased). Packed groups cost one read whatever their size, so this only bounds the pull's
 * JSON part; the bytes budget decides how many samples fit.
 */
export const MAX_INLINE_MEMBERS = 4096;
/**
 * Most members without a pack one pull reads one by one: with MAX_INLINE_GROUPS pack reads and a
 * second read per member published before sample tables, at most 768 reads, within the 1,000.
 * Groups past it go back to the feed.
 */
export const MAX_INLINE_MEMBER_READS = 256;
/**
 * Bytes one inline pull reads, in total. A sample table is viewed in place and a legacy record
 * is parsed whole (a few times its size while it lasts), in an isolate of 128 MB. Groups that do
 * not fit are handed back to the feed and come first in the next pull.
 */
export const MAX_INLINE_BYTES = 24 * 1024 * 1024;

/** A pulled member with its samples as a sample table (null: none, or unreadable: `record_error`). */
export type PulledMember = FeedMember & { table: ArrowTable | null; record_error?: string };
/**
 * A pulled group whose members carry their sample tables, or (read from its pack) whose `pack`
 * holds every member's rows, each member's `table` then null.
 */
export type PulledGroup = Omit<FeedGroup, "members"> & {
  members: PulledMember[];
  pack?: GroupPack;
};

/** What a pull read, and which leased groups it handed back for not fitting its budget. */
export interface PulledSamples<G> {
  groups: G[];
  /** Uids of leased groups left out (their members did not fit MAX_INLINE_BYTES). */
  returned: string[];
}

/** The JSON pull's answer: groups whose members carry TrainingSample objects. */
export type InlineResult = PulledSamples<InlineFeedGroup>;

const decoder = new TextDecoder();

/** A byte budget shared by the reads of one pull. */
class Budget {
  #left: number;
  constructor(bytes: number) {
    this.#left = bytes;
  }
  /** Takes `size` bytes if they fit (or `force`: the first group is always read); false otherwise. */
  take(size: number, force: boolean): boolean {
    if (size > this.#left && !force) return false;
    this.#left -= size;
    return true;
  }
}

type MemberRead = PulledMember | "over_budget";

/** The member's stored object: its sample table, else (published before them) its whole record. */
async function readTable(
  reader: SizedBlobReader,
  member: FeedMember,
  budget: Budget,
  first: boolean,
): Promise<ArrowTable | "over_budget" | string> {
  const table = await reader.get(rolloutSamplesKey(member.rollout_id));
  const blob = table ?? (await reader.get(member.key));
  if (!blob) return `no R2 object at ${member.key}`;
  if (!budget.take(blob.size, first)) {
    blob.discard();
    return "over_budget";
  }
  const bytes = await blob.bytes();
  if (table) return readSampleTable(new Uint8Array(bytes));
  const parsed = RolloutRecord.safeParse(JSON.parse(decoder.decode(bytes)));
  if (!parsed.success) return `R2 object at ${member.key} is not a valid rollout record`;
  return {
    columns: samplesToColumns(parsed.data.samples),
    length: parsed.data.samples.length,
    metadata: sampleTableMetadata(),
  };
}

async function readMember(
  reader: SizedBlobReader,
  member: FeedMember,
  budget: Budget,
  first: boolean,
): Promise<MemberRead> {
  // A member without samples (failed before its first call, a stand-in) has nothing to read.
  if (member.samples === 0) return { ...member, table: null };
  try {
    const read = await readTable(reader, member, budget, first);
    if (read === "over_budget") return read;
    if (typeof read === "string") return { ...member, table: null, record_error: read };
    return { ...member, table: flaggedTable(member, read) };
  } catch (error) {
    return { ...member, table: null, record_error: describeError(error) };
  }
}

/** A pack object read whole if it fits the budget; null if absent or unreadable (its groups are read per member). */
async function readPack(
  reader: SizedBlobReader,
  key: string,
  budget: Budget,
  first: boolean,
): Promise<PackObject | null | "over_budget"> {
  try {
    const blob = await reader.get(key);
    if (!blob) return null;
    if (!budget.take(blob.size, first)) {
      blob.discard();
      return "over_budget";
    }
    return readPackObject(new Uint8Array(await blob.bytes()));
  } catch {
    // An unreadable pack is not an error: the members' own objects are the source of truth.
    return null;
  }
}

/** `fn` over `items`, at most `limit` at once; results in item order. */
async function mapConcurrent<T, R>(
  items: T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const at = next++;
      out[at] = await fn(items[at]!, at);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** Reads a group without a pack member by member; "over_budget" if an object would pass the budget. */
async function readMembers(
  reader: SizedBlobReader,
  group: FeedGroup,
  budget: Budget,
  first: boolean,
): Promise<PulledGroup | "over_budget"> {
  let over = false;
  const members = await mapConcurrent(group.members, INLINE_READ_CONCURRENCY, async (member) => {
    if (over) return "over_budget" as const;
    const read = await readMember(reader, member, budget, first);
    if (read === "over_budget") over = true;
    return read;
  });
  return over ? "over_budget" : { ...group, members: members as PulledMember[] };
}

/**
 * Reads each group's samples in pull order: first the pack objects that hold them (`packs`: the
 * feed's refs; each object once, INLINE_READ_CONCURRENCY reads at once), then, for groups
 * without a usable pack, their members' objects. At most `maxBytes` in all and at most
 * MAX_INLINE_MEMBER_READS member reads. The first group is always read whole; a later group that
 * would pass a budget is left out and listed in `returned`, as is every group after it. An
 * object that is missing or invalid gives that member no samples and a `record_error`, rather
 * than failing the pull.
 */
export async function readPulledSamples(
  reader: SizedBlobReader,
  groups: FeedGroup[],
  packs: Record<string, PackRef> = {},
  maxBytes = MAX_INLINE_BYTES,
): Promise<PulledSamples<PulledGroup>> {
  const budget = new Budget(maxBytes);
  const keys = [...new Set(groups.flatMap((g) => (packs[g.uid] ? [packs[g.uid]!.key] : [])))];
  const firstKey = groups[0] ? packs[groups[0].uid]?.key : undefined;
  const objects = new Map(
    await mapConcurrent(
      keys,
      INLINE_READ_CONCURRENCY,
      async (key) => [key, await readPack(reader, key, budget, key === firstKey)] as const,
    ),
  );
  const read: PulledGroup[] = [];
  let memberReads = 0;
  const cut = (index: number): PulledSamples<PulledGroup> => ({
    groups: read,
    returned: groups.slice(index).map((g) => g.uid),
  });
  for (const [index, group] of groups.entries()) {
    const ref = packs[group.uid];
    const object = ref ? objects.get(ref.key) : null;
    if (object === "over_budget") return cut(index);
    const pack = object ? groupFromPack(object, group.uid, group.members) : null;
    if (pack) {
      read.push({
        ...group,
        members: group.members.map((member) => ({ ...member, table: null })),
        pack,
      });
      continue;
    }
    const reads = group.members.filter((m) => m.samples > 0).length;
    if (index > 0 && memberReads + reads > MAX_INLINE_MEMBER_READS) return cut(index);
    memberReads += reads;
    const members = await readMembers(reader, group, budget, index === 0);
    if (members === "over_budget") return cut(index);
    read.push(members);
  }
  return { groups: read, returned: [] };
}

/** A packed group's samples, member by member (the pack's rows are in member order). */
function packedSamples(pack: GroupPack): TrainingSample[][] {
  const samples = columnsToSamples(readSampleTable(groupPackStream(pack)));
  let at = 0;
  return pack.rows.map((rows) => samples.slice(at, (at += rows)));
}

/** Pulled groups as the JSON pull answers them: each member's samples as TrainingSample objects. */
export function inlineGroups(groups: PulledGroup[]): InlineFeedGroup[] {
  return groups.map(({ pack, ...group }) => {
    const packed = pack ? packedSamples(pack) : null;
    return {
      ...group,
      members: group.members.map(({ table, ...member }, i) => ({
        ...member,
        samples: packed ? packed[i]! : table ? columnsToSamples(table) : [],
      })),
    };
  });
}

/** `readPulledSamples`, answered as the JSON pull's groups. */
export async function inlineSamples(
  reader: SizedBlobReader,
  groups: FeedGroup[],
  maxBytes = MAX_INLINE_BYTES,
): Promise<InlineResult> {
  const read = await readPulledSamples(reader, groups, {}, maxBytes);
  return { groups: inlineGroups(read.groups), returned: read.returned };
}
