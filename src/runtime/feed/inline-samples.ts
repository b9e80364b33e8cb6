/**
 * @module Reading pulled groups' training samples from their R2 records (`inline: true`). Done by
 * the Worker route, not the feed object, so the object's single thread never waits on R2.
 */
import { describeError } from "../../errors";
import type { BlobStorePort } from "../../ports";
import type { FeedGroup, FeedMember, InlineFeedGroup, InlineFeedMember } from "../../schemas/feed";
import type { TrainingSample } from "../../schemas/training-sample";
import { RolloutRecord } from "../../sink/rollout-record";

/**
 * R2 reads in flight at once: a Worker invocation may hold 6 simultaneous outgoing connections,
 * and R2 calls count towards them.
 */
export const INLINE_READ_CONCURRENCY = 6;

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

async function inlineMember(blobs: BlobStorePort, member: FeedMember): Promise<InlineFeedMember> {
  try {
    const bytes = await blobs.get(member.key);
    if (!bytes) return { ...member, samples: [], record_error: `no R2 object at ${member.key}` };
    const parsed = RolloutRecord.safeParse(JSON.parse(decoder.decode(bytes)));
    if (!parsed.success) return { ...member, samples: [], record_error: `R2 object at ${member.key} is not a valid rollout record` };
    return { ...member, samples: flagged(member, parsed.data.samples) };
  } catch (error) {
    return { ...member, samples: [], record_error: describeError(error) };
  }
}

/**
 * Replaces each member's sample count by its samples. A record that is missing or invalid gives
 * that member no samples and a `record_error`, rather than failing the pull (the lease is already
 * taken; failing would only redeliver the same group after it expires).
 */
export async function inlineSamples(blobs: BlobStorePort, groups: FeedGroup[]): Promise<InlineFeedGroup[]> {
  const members = groups.flatMap((group) => group.members);
  const read: InlineFeedMember[] = new Array(members.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < members.length) {
      const index = next++;
      read[index] = await inlineMember(blobs, members[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(INLINE_READ_CONCURRENCY, members.length) }, worker));
  let offset = 0;
  return groups.map((group) => {
    const inline = read.slice(offset, offset + group.members.length);
    offset += group.members.length;
    return { ...group, members: inline };
  });
}
