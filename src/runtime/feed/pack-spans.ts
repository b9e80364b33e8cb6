/**
 * @module An Arrow pull streamed straight from the pack objects: when every leased group has a
 * byte span in its pack (pack-index.ts) listing exactly the members the feed leased, the pull's
 * answer is its own schema message, then the groups' record batches as R2 range reads piped
 * through (contiguous spans of one object merged into one read), then the end-of-stream marker.
 * The Worker never holds the samples' bytes, so a pull is bounded by what the client takes
 * (MAX_STREAMED_BYTES), not by the isolate's 128 MB, and costs one read per run of a pack.
 */
import type { FeedGroup } from "../../schemas/feed";
import { columnsSignature } from "../../sink/formats/arrow/arrow-ipc";
import type { Column, Vector } from "../../sink/formats/arrow/vectors";
import type { PackRef, PackSpan } from "./pack-index";

/** One range read: `length` bytes at `offset` of the object at `key`. */
export interface SpanRead {
  key: string;
  offset: number;
  length: number;
}

/**
 * Bytes of samples one streamed pull answers (the first group always goes): ~3,000 samples of
 * 2,048 tokens. The Worker streams them through; the client holds them while it decodes.
 */
export const MAX_STREAMED_BYTES = 64 * 1024 * 1024;

/** A streamed pull's plan: its groups in stream order with each member's rows, the columns, the reads. */
export interface StreamedPull {
  groups: Array<{ group: FeedGroup; rows: number[] }>;
  columns: Column[];
  reads: SpanRead[];
  /** Bytes the reads return. */
  bytes: number;
  /** Uids of leased groups left out (over MAX_STREAMED_BYTES). */
  returned: string[];
}

/** A column standing for `type` (no values; a nullable utf8 holds one null, which is all the schema reads). */
function standIn(type: string): Vector | null {
  if (type.startsWith("list<") && type.endsWith(">")) {
    const child = standIn(type.slice(5, -1));
    return child ? { type: "list", offsets: Int32Array.of(0), child } : null;
  }
  switch (type) {
    case "int32":
      return { type, values: new Int32Array(0) };
    case "int64":
      return { type, values: new Float64Array(0) };
    case "float32":
      return { type, values: new Float32Array(0) };
    case "float64":
      return { type, values: new Float64Array(0) };
    case "bool":
      return { type, values: new Uint8Array(0) };
    case "utf8":
      return { type, values: [] };
    case "utf8?":
      return { type: "utf8", values: [null] };
    default:
      return null;
  }
}

/** Columns whose schema is `signature` (columnsSignature's form), or null if it cannot be read back. */
export function columnsOfSignature(signature: string): Column[] | null {
  const columns: Column[] = [];
  for (const part of signature.split(",")) {
    const at = part.indexOf(":");
    const vector = at > 0 ? standIn(part.slice(at + 1)) : null;
    if (!vector) return null;
    columns.push({ name: part.slice(0, at), vector });
  }
  return columnsSignature(columns) === signature ? columns : null;
}

function spanFits(span: PackSpan | undefined, group: FeedGroup): span is PackSpan {
  return (
    span !== undefined &&
    span.rows.length === group.members.length &&
    group.members.every(
      (m, i) => span.rows[i]![0] === m.rollout_id && span.rows[i]![1] === m.samples,
    )
  );
}

/**
 * The streamed plan of a pull, or null when any group lacks a fitting span or the groups'
 * column layouts differ (the caller then reads and re-encodes, as before spans). Groups keep the
 * lease's order (the JSON pull's, which clients may compare); a pack's groups leased one after
 * another (a consumer batch's groups complete, and are leased, together) become one read.
 */
export function planStreamedPull(
  groups: FeedGroup[],
  packs: Record<string, PackRef>,
  maxBytes = MAX_STREAMED_BYTES,
): StreamedPull | null {
  if (groups.length === 0) return null;
  const spanned: Array<{ group: FeedGroup; key: string; span: PackSpan }> = [];
  for (const group of groups) {
    const ref = packs[group.uid];
    if (!ref || !spanFits(ref.span, group)) return null;
    spanned.push({ group, key: ref.key, span: ref.span });
  }
  const signature = spanned[0]!.span.signature;
  if (spanned.some((g) => g.span.signature !== signature)) return null;
  const columns = columnsOfSignature(signature);
  if (!columns) return null;
  const plan: StreamedPull = { groups: [], columns, reads: [], bytes: 0, returned: [] };
  for (const { group, key, span } of spanned) {
    if (plan.groups.length > 0 && plan.bytes + span.length > maxBytes) {
      plan.returned.push(group.uid);
      continue;
    }
    plan.groups.push({ group, rows: span.rows.map(([, rows]) => rows) });
    plan.bytes += span.length;
    const last = plan.reads.at(-1);
    if (last && last.key === key && last.offset + last.length === span.offset)
      last.length += span.length;
    else plan.reads.push({ key, offset: span.offset, length: span.length });
  }
  return plan;
}
