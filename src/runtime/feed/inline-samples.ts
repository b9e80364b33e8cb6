/**
 * @module Reading pulled groups' training samples from their R2 records (`inline: true`). Done by
 * the Worker route, not the feed object, so the object's single thread never waits on R2. What
 * one pull may cost is bounded: records read (each R2 read is a subrequest, and an invocation
 * gets a bounded number of them), and bytes read and parsed (an isolate has 128 MB).
 */
import { describeError } from "../../errors";
import type { FeedGroup, FeedMember, InlineFeedGroup, InlineFeedMember } from "../../schemas/feed";
import type { TrainingSample } from "../../schemas/training-sample";
import { RolloutRecord } from "../../sink/rollout-record";

/**
 * R2 reads in flight at once: a Worker invocation may hold 6 simultaneous outgoing connections,
 * and R2 calls count towards them.
 */
export const INLINE_READ_CONCURRENCY = 6;
/**
 * Most members (R2 records) one inline pull leases and reads. Every read is a subrequest, and an
 * invocation gets a bounded number (1,000 on the Paid plan); 256 leaves room for the rest of the
 * pull. The feed stops leasing groups at this many members (the first group is always leased).
 */
export const MAX_INLINE_MEMBERS = 256;
/**
 * Record bytes one inline pull reads and parses, in total. A record is decoded and parsed whole,
 * which takes a few times its size while it lasts, in an isolate of 128 MB. Groups that do not
 * fit are handed back to the feed and come first in the next pull.
 */
export const MAX_INLINE_BYTES = 24 * 1024 * 1024;

/** An R2 object whose size is known before its body is read. */
export interface SizedBlob {
  size: number;
  bytes(): Promise<ArrayBuffer>;
  /** Lets go of the body without reading it. */
  discard(): void;
}

/** Reads objects with their size first (R2's `get` answers the size before the body streams). */
export interface SizedBlobReader {
  get(key: string): Promise<SizedBlob | null>;
}

/** What an inline pull read, and which leased groups it handed back for not fitting its budget. */
export interface InlineResult {
  groups: InlineFeedGroup[];
  /** Uids of leased groups left out (their members did not fit MAX_INLINE_BYTES). */
  returned: string[];
}

const decoder = new TextDecoder();

/**
 * The member's samples, flagged for masking when its rollout did not succeed, with the keys the
 * sample builder uses (`failed`, `trainable`, `status`): a no-op for records it wrote, a guard for
 * records written some other way.
 */
function flagged(member: FeedMember, samples: TrainingSample[]): TrainingSample[] {
  if (member.status === "succeeded") return samples;
  return samples.map((sample) => ({ ...sample, extra_fields: { ...sample.extra_fields, failed: true, trainable: false, status: member.status } }));
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

type MemberRead = InlineFeedMember | "over_budget";

async function inlineMember(reader: SizedBlobReader, member: FeedMember, budget: Budget, first: boolean): Promise<MemberRead> {
  // A member without samples (failed before its first call, a stand-in) has nothing to read.
  if (member.samples === 0) return { ...member, samples: [] };
  try {
    const blob = await reader.get(member.key);
    if (!blob) return { ...member, samples: [], record_error: `no R2 object at ${member.key}` };
    if (!budget.take(blob.size, first)) {
      blob.discard();
      return "over_budget";
    }
    const parsed = RolloutRecord.safeParse(JSON.parse(decoder.decode(await blob.bytes())));
    if (!parsed.success) return { ...member, samples: [], record_error: `R2 object at ${member.key} is not a valid rollout record` };
    return { ...member, samples: flagged(member, parsed.data.samples) };
  } catch (error) {
    return { ...member, samples: [], record_error: describeError(error) };
  }
}

/**
 * Replaces each member's sample count by its samples, group by group in pull order, at most
 * INLINE_READ_CONCURRENCY reads at once and at most `maxBytes` of records in all. The first group
 * is always read whole; a later group any of whose records would pass the budget is left out and
 * listed in `returned`, as is every group after it. A record that is missing or invalid gives that
 * member no samples and a `record_error`, rather than failing the pull.
 */
export async function inlineSamples(reader: SizedBlobReader, groups: FeedGroup[], maxBytes = MAX_INLINE_BYTES): Promise<InlineResult> {
  const budget = new Budget(maxBytes);
  const inlined: InlineFeedGroup[] = [];
  for (const [index, group] of groups.entries()) {
    const read: MemberRead[] = new Array(group.members.length);
    let next = 0;
    let over = false;
    const worker = async (): Promise<void> => {
      while (next < group.members.length && !over) {
        const at = next++;
        read[at] = await inlineMember(reader, group.members[at]!, budget, index === 0);
        if (read[at] === "over_budget") over = true;
      }
    };
    await Promise.all(Array.from({ length: Math.min(INLINE_READ_CONCURRENCY, group.members.length) }, worker));
    if (over) return { groups: inlined, returned: groups.slice(index).map((g) => g.uid) };
    inlined.push({ ...group, members: read as InlineFeedMember[] });
  }
  return { groups: inlined, returned: [] };
}
