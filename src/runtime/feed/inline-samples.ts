/**
 * @module Reading pulled groups' training samples from R2 (`inline: true`, and every Arrow pull).
 * Done by the Worker route, not the feed object, so the object's single thread never waits on R2.
 * Each member's samples come from its sample table (`rollouts/<id>/samples.arrow`, written at
 * publication), so no trajectory is parsed; a rollout published before sample tables existed is
 * read from its record. What one pull may cost is bounded: objects read (each R2 read is a
 * subrequest, and an invocation gets a bounded number of them), and bytes read (an isolate has 128 MB).
 */
import { describeError } from "../../errors";
import type { SizedBlobReader } from "../../ports";
import type { FeedGroup, FeedMember, InlineFeedGroup } from "../../schemas/feed";
import type { ArrowTable } from "../../sink/arrow/arrow-format";
import { rolloutSamplesKey } from "../../sink/r2-keys";
import { RolloutRecord } from "../../sink/rollout-record";
import { columnsToSamples, readSampleTable, samplesToColumns, sampleTableMetadata, withExtraFields } from "../../sink/sample-columns";

/**
 * R2 reads in flight at once: a Worker invocation may hold 6 simultaneous outgoing connections,
 * and R2 calls count towards them.
 */
export const INLINE_READ_CONCURRENCY = 6;
/**
 * Most members (R2 objects) one inline pull leases and reads. Every read is a subrequest, and an
 * invocation gets a bounded number (1,000 on the Paid plan); 256 leaves room for the rest of the
 * pull (and for a second read per member published before sample tables). The feed stops leasing
 * groups at this many members (the first group is always leased).
 */
export const MAX_INLINE_MEMBERS = 256;
/**
 * Bytes one inline pull reads, in total. A sample table is viewed in place and a legacy record
 * is parsed whole (a few times its size while it lasts), in an isolate of 128 MB. Groups that do
 * not fit are handed back to the feed and come first in the next pull.
 */
export const MAX_INLINE_BYTES = 24 * 1024 * 1024;

/** A pulled member with its samples as a sample table (null: none, or unreadable: `record_error`). */
export type PulledMember = FeedMember & { table: ArrowTable | null; record_error?: string };
/** A pulled group whose members carry their sample tables. */
export type PulledGroup = Omit<FeedGroup, "members"> & { members: PulledMember[] };

/** What a pull read, and which leased groups it handed back for not fitting its budget. */
export interface PulledSamples<G> {
  groups: G[];
  /** Uids of leased groups left out (their members did not fit MAX_INLINE_BYTES). */
  returned: string[];
}

/** The JSON pull's answer: groups whose members carry TrainingSample objects. */
export type InlineResult = PulledSamples<InlineFeedGroup>;

const decoder = new TextDecoder();

/**
 * Flags the samples of a member whose rollout did not succeed for masking, with the keys the
 * sample builder uses (`failed`, `trainable`, `status`): a no-op for tables it wrote, a guard
 * for tables written some other way.
 */
function flagged(member: FeedMember, table: ArrowTable): ArrowTable {
  if (member.status === "succeeded") return table;
  return withExtraFields(table, (fields) => ({ ...fields, failed: true, trainable: false, status: member.status }));
}

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
async function readTable(reader: SizedBlobReader, member: FeedMember, budget: Budget, first: boolean): Promise<ArrowTable | "over_budget" | string> {
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
  return { columns: samplesToColumns(parsed.data.samples), length: parsed.data.samples.length, metadata: sampleTableMetadata() };
}

async function readMember(reader: SizedBlobReader, member: FeedMember, budget: Budget, first: boolean): Promise<MemberRead> {
  // A member without samples (failed before its first call, a stand-in) has nothing to read.
  if (member.samples === 0) return { ...member, table: null };
  try {
    const read = await readTable(reader, member, budget, first);
    if (read === "over_budget") return read;
    if (typeof read === "string") return { ...member, table: null, record_error: read };
    return { ...member, table: flagged(member, read) };
  } catch (error) {
    return { ...member, table: null, record_error: describeError(error) };
  }
}

/**
 * Reads each member's samples, group by group in pull order, at most INLINE_READ_CONCURRENCY
 * reads at once and at most `maxBytes` in all. The first group is always read whole; a later
 * group any of whose objects would pass the budget is left out and listed in `returned`, as is
 * every group after it. An object that is missing or invalid gives that member no samples and a
 * `record_error`, rather than failing the pull.
 */
export async function readPulledSamples(reader: SizedBlobReader, groups: FeedGroup[], maxBytes = MAX_INLINE_BYTES): Promise<PulledSamples<PulledGroup>> {
  const budget = new Budget(maxBytes);
  const read: PulledGroup[] = [];
  for (const [index, group] of groups.entries()) {
    const members: MemberRead[] = new Array(group.members.length);
    let next = 0;
    let over = false;
    const worker = async (): Promise<void> => {
      while (next < group.members.length && !over) {
        const at = next++;
        members[at] = await readMember(reader, group.members[at]!, budget, index === 0);
        if (members[at] === "over_budget") over = true;
      }
    };
    await Promise.all(Array.from({ length: Math.min(INLINE_READ_CONCURRENCY, group.members.length) }, worker));
    if (over) return { groups: read, returned: groups.slice(index).map((g) => g.uid) };
    read.push({ ...group, members: members as PulledMember[] });
  }
  return { groups: read, returned: [] };
}

/** Pulled groups as the JSON pull answers them: each member's samples as TrainingSample objects. */
export function inlineGroups(groups: PulledGroup[]): InlineFeedGroup[] {
  return groups.map((group) => ({
    ...group,
    members: group.members.map(({ table, ...member }) => ({ ...member, samples: table ? columnsToSamples(table) : [] })),
  }));
}

/** `readPulledSamples`, answered as the JSON pull's groups. */
export async function inlineSamples(reader: SizedBlobReader, groups: FeedGroup[], maxBytes = MAX_INLINE_BYTES): Promise<InlineResult> {
  const read = await readPulledSamples(reader, groups, maxBytes);
  return { groups: inlineGroups(read.groups), returned: read.returned };
}
