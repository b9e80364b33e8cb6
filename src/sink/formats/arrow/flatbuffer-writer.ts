/**
 * @module A minimal FlatBuffers writer for Arrow IPC message headers. Objects are laid out front
 * to back (a parent before its children), so every unsigned offset points forward as the format
 * requires; scalars are aligned to their size from the buffer's start (which Arrow keeps 8-aligned).
 */

/** A scalar field of a table, by width. */
export type FbScalar =
  { kind: "u8" | "i16" | "i32"; value: number } | { kind: "i64"; value: number };

/** A table: fields by slot (vtable index); `undefined` slots are absent (the reader's default). */
export interface FbTable {
  kind: "table";
  fields: Array<FbScalar | FbRef | undefined>;
}

/** Something a table or vector points to. */
export type FbRef =
  | FbTable
  | { kind: "string"; value: string }
  | { kind: "tables"; items: FbTable[] }
  | { kind: "structs"; bytes: Uint8Array };

/** A table of `fields` by slot. */
export function table(...fields: Array<FbScalar | FbRef | undefined>): FbTable {
  return { kind: "table", fields };
}

const encoder = new TextEncoder();

class Out {
  bytes = new Uint8Array(1024);
  view = new DataView(this.bytes.buffer);
  end = 0;

  reserve(size: number, align: number): number {
    this.end = Math.ceil(this.end / align) * align;
    const at = this.end;
    this.end += size;
    if (this.end > this.bytes.length) {
      const grown = new Uint8Array(Math.max(this.end, this.bytes.length * 2));
      grown.set(this.bytes);
      this.bytes = grown;
      this.view = new DataView(grown.buffer);
    }
    return at;
  }
}

function widthOf(field: FbScalar | FbRef): number {
  if (field.kind === "u8") return 1;
  if (field.kind === "i16") return 2;
  if (field.kind === "i64") return 8;
  return 4; // i32 and every offset
}

function isScalar(field: FbScalar | FbRef): field is FbScalar {
  return (
    field.kind === "u8" || field.kind === "i16" || field.kind === "i32" || field.kind === "i64"
  );
}

function writeScalar(out: Out, at: number, field: FbScalar): void {
  if (field.kind === "u8") out.view.setUint8(at, field.value);
  else if (field.kind === "i16") out.view.setInt16(at, field.value, true);
  else if (field.kind === "i32") out.view.setInt32(at, field.value, true);
  else out.view.setBigInt64(at, BigInt(field.value), true);
}

/** Writes `ref` at the end and returns its position; `patch` positions get their forward offsets afterwards. */
function place(out: Out, ref: FbRef): number {
  if (ref.kind === "string") {
    const utf8 = encoder.encode(ref.value);
    const at = out.reserve(4 + utf8.length + 1, 4);
    out.view.setUint32(at, utf8.length, true);
    out.bytes.set(utf8, at + 4);
    out.bytes[at + 4 + utf8.length] = 0;
    return at;
  }
  if (ref.kind === "structs") {
    // Elements (Arrow's FieldNode / Buffer: two int64s) must be 8-aligned, after a 4-byte length.
    out.reserve(0, 8);
    if (out.end % 8 === 0) out.reserve(4, 1);
    const at = out.reserve(4 + ref.bytes.length, 4);
    out.view.setUint32(at, ref.bytes.length / 16, true);
    out.bytes.set(ref.bytes, at + 4);
    return at;
  }
  if (ref.kind === "tables") {
    const at = out.reserve(4 + 4 * ref.items.length, 4);
    out.view.setUint32(at, ref.items.length, true);
    ref.items.forEach((item, i) => {
      const slot = at + 4 + 4 * i;
      // Placed first: placing may grow (replace) the buffer that `out.view` points at.
      const target = place(out, item);
      out.view.setUint32(slot, target - slot, true);
    });
    return at;
  }
  return placeTable(out, ref);
}

function placeTable(out: Out, ref: FbTable): number {
  const present = ref.fields
    .map((field, slot) => ({ field, slot }))
    .filter((f): f is { field: FbScalar | FbRef; slot: number } => f.field !== undefined);
  // Widest first, so each field sits aligned after the 4-byte vtable offset (8-byte fields from +8).
  present.sort((a, b) => widthOf(b.field) - widthOf(a.field));
  const hasWide = present.some((f) => widthOf(f.field) === 8);
  let cursor = hasWide ? 8 : 4;
  const offsets = new Map<number, number>();
  for (const { field, slot } of present) {
    const width = widthOf(field);
    cursor = Math.ceil(cursor / width) * width;
    offsets.set(slot, cursor);
    cursor += width;
  }
  const inlineSize = Math.ceil(cursor / 4) * 4;
  const vtableSize = 4 + 2 * ref.fields.length;
  const vtable = out.reserve(vtableSize, 2);
  const at = out.reserve(inlineSize, 8);
  out.view.setUint16(vtable, vtableSize, true);
  out.view.setUint16(vtable + 2, inlineSize, true);
  ref.fields.forEach((_, slot) =>
    out.view.setUint16(vtable + 4 + 2 * slot, offsets.get(slot) ?? 0, true),
  );
  out.view.setInt32(at, at - vtable, true);
  const children: Array<{ pos: number; ref: FbRef }> = [];
  for (const { field, slot } of present) {
    const pos = at + offsets.get(slot)!;
    if (isScalar(field)) writeScalar(out, pos, field);
    else children.push({ pos, ref: field });
  }
  for (const child of children) {
    const target = place(out, child.ref);
    out.view.setUint32(child.pos, target - child.pos, true);
  }
  return at;
}

/**
 * The writer's buffer, reused by every call (they are synchronous): a new one per message was a
 * measured share of a small record batch's encoding. Zeroed again over what the last call used,
 * so alignment padding is always zero and equal input gives equal bytes.
 */
let scratch = new Out();
/** A scratch grown past this (a pull's large schema metadata) is not kept for the isolate's life. */
const MAX_KEPT_SCRATCH = 64 * 1024;

/** The FlatBuffer of `root`, padded to a multiple of 8 bytes. */
export function finishFlatBuffer(root: FbTable): Uint8Array {
  const out = scratch;
  out.bytes.fill(0, 0, out.end);
  out.end = 0;
  const rootSlot = out.reserve(4, 4);
  const target = placeTable(out, root);
  out.view.setUint32(rootSlot, target - rootSlot, true);
  out.reserve(0, 8);
  const bytes = out.bytes.slice(0, out.end);
  if (out.bytes.length > MAX_KEPT_SCRATCH) scratch = new Out();
  return bytes;
}
