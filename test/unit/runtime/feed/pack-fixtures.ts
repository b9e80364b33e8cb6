/** Fixtures of the pack tests: sample tables stored in an in-memory bucket and packed as the consumer packs them. */
import { packCompletedGroups, type CompletedGroup } from "../../../../src/runtime/feed/group-pack";
import type { PackRef } from "../../../../src/runtime/feed/pack-index";
import type { BlobStorePort, SizedBlobReader } from "../../../../src/ports";
import type { FeedGroup, FeedMember } from "../../../../src/schemas/feed";
import { TrainingSample } from "../../../../src/schemas/training-sample";
import { ARROW_EOS, joinChunks } from "../../../../src/sink/formats/arrow/arrow-ipc";
import { rolloutSamplesKey } from "../../../../src/sink/publication/r2-keys";
import { encodeSampleTable } from "../../../../src/sink/formats/sample-columns";

export function sample(
  uid: string,
  index: number,
  segment: number,
  tokens: number,
): TrainingSample {
  return TrainingSample.parse({
    uid,
    sample_index: index,
    rollout_id: `${uid}:${index}`,
    segment_index: segment,
    prompt_ids: [1, 2, 3],
    response_ids: Array.from({ length: tokens }, (_, i) => i),
    response_mask: Array.from({ length: tokens }, () => 1),
    response_logprobs: Array.from({ length: tokens }, () => -0.5),
    reward_score: index,
    num_turns: 1,
    termination_reason: "ENV_DONE",
    policy_version: { start: 1, end: 1 },
  });
}

/** An in-memory bucket: the objects the packer reads and writes, as bytes. */
export function memoryBucket(): {
  reader: SizedBlobReader;
  blobs: BlobStorePort;
  objects: Map<string, Uint8Array>;
} {
  const objects = new Map<string, Uint8Array>();
  const reader: SizedBlobReader = {
    async get(key) {
      const bytes = objects.get(key);
      return bytes
        ? { size: bytes.length, bytes: async () => bytes.slice().buffer, discard: () => undefined }
        : null;
    },
  };
  const blobs: BlobStorePort = {
    async put(key, body) {
      objects.set(
        key,
        typeof body === "string"
          ? new TextEncoder().encode(body)
          : new Uint8Array(body as ArrayBuffer),
      );
    },
    async get(key) {
      return objects.get(key)?.slice().buffer ?? null;
    },
  };
  return { reader, blobs, objects };
}

/** `n` members of group `uid`, each with `segments` samples of `tokens(i)` tokens, their sample tables stored in `bucket`. */
export async function storedMembers(
  bucket: ReturnType<typeof memoryBucket>,
  uid: string,
  n: number,
  segments: number,
  tokens: (member: number) => number,
): Promise<FeedMember[]> {
  const members: FeedMember[] = [];
  for (let i = 0; i < n; i++) {
    const samples = Array.from({ length: segments }, (_, s) => sample(uid, i, s, tokens(i)));
    await bucket.blobs.put(
      rolloutSamplesKey(`${uid}:${i}`),
      encodeSampleTable(samples).buffer as ArrayBuffer,
      "application/vnd.apache.arrow.stream",
    );
    members.push({
      rollout_id: `${uid}:${i}`,
      sample_index: i,
      status: "succeeded",
      termination_reason: "ENV_DONE",
      reward: i,
      policy_version_start: 1,
      policy_version_end: 1,
      key: `k/${uid}:${i}`,
      samples: segments,
    });
  }
  return members;
}

/** `groups` groups of `n` members, each member `segments` samples; their sample tables stored; the groups packed `perPack` to an object. */
export async function packedGroups(
  groups: number,
  n: number,
  segments: number,
  perPack: number,
  batchId = "b",
) {
  const bucket = memoryBucket();
  const feedGroups: FeedGroup[] = [];
  const refs: Record<string, PackRef> = {};
  for (let g = 0; g < groups; g++) {
    const uid = `g${g}`;
    const members = await storedMembers(bucket, uid, n, segments, (i) => 4 + g + i);
    feedGroups.push({
      uid,
      batch_id: batchId,
      training_mode: "async",
      group_size: n,
      policy_version_start: 1,
      policy_version_end: 1,
      partial: false,
      deliveries: 1,
      members,
    });
  }
  for (let at = 0; at < groups; at += perPack) {
    const completed: CompletedGroup[] = feedGroups
      .slice(at, at + perPack)
      .map((g) => ({ uid: g.uid, members: g.members }));
    const report = await packCompletedGroups(
      bucket.reader,
      bucket.blobs,
      completed,
      () => `p${at}`,
    );
    for (const { uid, ...ref } of report.refs) refs[uid] = ref;
  }
  return { bucket, feedGroups, refs };
}

/** What a streamed pull's body is: the head, the planned byte ranges of the pack objects, the end marker. */
export function streamedBody(
  objects: Map<string, Uint8Array>,
  head: Uint8Array[],
  reads: Array<{ key: string; offset: number; length: number }>,
): Uint8Array {
  const ranges = reads.map((r) => objects.get(r.key)!.subarray(r.offset, r.offset + r.length));
  return joinChunks([...head, ...ranges, ARROW_EOS]);
}
