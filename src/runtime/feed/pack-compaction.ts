/**
 * @module Pack compaction: a feed shard rewrites the byte spans of its ready groups, scattered over
 * many small packs (a results-consumer batch completes a few groups, and each batch writes its own
 * pack), into one large pack in lease order, so a pull of 256 groups streams a few range reads
 * instead of one per consumer batch. Nothing is decoded: each group's record batch is copied byte
 * for byte (an Arrow record batch message does not depend on where it sits in its stream) behind a
 * schema message built from the spans' shared column signature. The small packs stay where they
 * are until retention: a pull that leased a group before its ref moved still reads its old span.
 */
import { DEFAULT_PACK_COMPACTION_MIN_BYTES } from "../../schemas/feed";
import { ARROW_EOS, encodeSchemaFrame } from "../../sink/formats/arrow/arrow-ipc";
import { groupPackKey } from "../../sink/publication/r2-keys";
import { sampleTableMetadata } from "../../sink/formats/sample-columns";
import { GROUP_PACK_GROUPS_KEY } from "./group-pack";
import type { PackRef, PackSpan } from "./pack-index";
import { columnsOfSignature, type SpanRead } from "./pack-spans";

/** A compacted pack's key is `packs/c-<id>.arrow`: its groups are never compacted again. */
const COMPACTED_ID_PREFIX = "c-";

/** Whether `key` is a pack this module wrote. */
export function isCompactedPack(key: string): boolean {
  return key.startsWith(groupPackKey(COMPACTED_ID_PREFIX).slice(0, -".arrow".length));
}

/** When a shard compacts, and how much one compaction moves. */
export interface CompactionLimits {
  /** Bytes of one batch's ready groups in small packs before they are compacted. */
  minBytes: number;
  /** Bytes one compacted pack holds at most (the first group always goes). */
  maxBytes: number;
  /** Range reads one compaction makes at most (subrequests of the shard's invocation). */
  maxReads: number;
}

/**
 * The feed config's threshold (`pack_compaction_min_bytes`, 8 MiB by default); 32 MiB per pack,
 * so a 64 MiB streamed pull (MAX_STREAMED_BYTES) reads two or three packs; 256 reads, well within
 * the 1,000 subrequests an invocation may make on the Paid plan.
 */
export const COMPACTION_LIMITS: CompactionLimits = {
  minBytes: DEFAULT_PACK_COMPACTION_MIN_BYTES,
  maxBytes: 32 * 1024 * 1024,
  maxReads: 256,
};

/**
 * How long a shard waits after its last recorded pack before it compacts what is left below the
 * threshold (a batch's tail): 2 s, longer than a busy results queue leaves between consumer batches.
 */
export const QUIET_COMPACTION_MS = 2_000;

/** A ready group with its pack ref, in the order the feed leases (oldest ready first). */
export interface CompactionCandidate {
  uid: string;
  batch_id: string | null;
  ref: PackRef;
}

/** A group's move: its ref before (still valid) and in the compacted pack. */
export interface PackMove {
  uid: string;
  from: PackRef;
  to: PackRef & { span: PackSpan };
}

/** One compaction: the new pack's key, its schema message, the reads that fill it, and the moves. */
export interface CompactionPlan {
  key: string;
  head: Uint8Array[];
  reads: SpanRead[];
  bytes: number;
  moves: PackMove[];
}

type Spanned = CompactionCandidate & { ref: PackRef & { span: PackSpan } };

/** Whether `span` of `key` continues the last read (consecutive spans of one object are one read). */
function continuesRead(reads: SpanRead[], key: string, span: PackSpan): boolean {
  const last = reads.at(-1);
  return last !== undefined && last.key === key && last.offset + last.length === span.offset;
}

/**
 * The next compaction, or null when none is due: the candidates of one batch and column layout
 * (pulls usually name a batch, and a stream has one schema), first in lease order, whose small
 * packs hold at least `minBytes` in at least two reads, taken in lease order up to `maxBytes`.
 */
export function planCompaction(
  candidates: CompactionCandidate[],
  newId: () => string,
  limits: CompactionLimits = COMPACTION_LIMITS,
): CompactionPlan | null {
  const byLayout = new Map<string, Spanned[]>();
  for (const candidate of candidates) {
    const span = candidate.ref.span;
    if (!span || isCompactedPack(candidate.ref.key)) continue;
    const layout = `${candidate.batch_id ?? ""}\u0000${span.signature}`;
    byLayout.set(layout, [...(byLayout.get(layout) ?? []), candidate as Spanned]);
  }
  for (const group of byLayout.values()) {
    if (group.reduce((n, g) => n + g.ref.span.length, 0) < limits.minBytes) continue;
    const taken: Spanned[] = [];
    const reads: SpanRead[] = [];
    let bytes = 0;
    for (const candidate of group) {
      const { key, span } = candidate.ref;
      const continues = continuesRead(reads, key, span);
      if (
        taken.length > 0 &&
        (bytes + span.length > limits.maxBytes || (!continues && reads.length >= limits.maxReads))
      )
        break;
      if (continues) reads.at(-1)!.length += span.length;
      else reads.push({ key, offset: span.offset, length: span.length });
      taken.push(candidate);
      bytes += span.length;
    }
    if (reads.length < 2) continue;
    const columns = columnsOfSignature(taken[0]!.ref.span.signature);
    if (!columns) continue;
    const key = groupPackKey(`${COMPACTED_ID_PREFIX}${newId()}`);
    const listed = JSON.stringify(taken.map((g) => [g.uid, g.ref.span.rows]));
    const head = encodeSchemaFrame(
      columns,
      sampleTableMetadata({ [GROUP_PACK_GROUPS_KEY]: listed }),
    );
    let offset = head.reduce((n, c) => n + c.length, 0);
    const moves = taken.map(({ uid, ref }, index): PackMove => {
      const span: PackSpan = { ...ref.span, offset };
      offset += ref.span.length;
      return { uid, from: ref, to: { key, index, span } };
    });
    return { key, head, reads, bytes: offset + ARROW_EOS.length, moves };
  }
  return null;
}
