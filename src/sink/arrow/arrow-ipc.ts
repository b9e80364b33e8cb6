/**
 * @module Arrow IPC streams (`application/vnd.apache.arrow.stream`) of flat columns: the binary
 * feed format. Only what the feed needs: int32/int64/float32/float64/bool/utf8 columns and lists
 * of them, no dictionaries, no compression, little-endian. pyarrow's `ipc.open_stream` reads the
 * output; the reader reads this writer's streams (and any stream limited to those types).
 */
import { FbReader } from "./flatbuffer-reader";
import { finishFlatBuffer, table, type FbRef, type FbTable } from "./flatbuffer-writer";
import { concatVectors, lengthOf, type Column, type Vector } from "./vectors";

/** The IANA media type of an Arrow IPC stream. */
export const ARROW_STREAM_MEDIA_TYPE = "application/vnd.apache.arrow.stream";

/** A decoded stream: its columns (record batches concatenated), row count and schema metadata. */
export interface ArrowTable {
  columns: Column[];
  length: number;
  metadata: Record<string, string>;
}

const METADATA_V5 = 4;
const HEADER = { schema: 1, recordBatch: 3 } as const;
const TYPE = { int: 2, floatingPoint: 3, utf8: 5, bool: 6, list: 12 } as const;
const PRECISION = { float32: 1, float64: 2 } as const;
const CONTINUATION = 0xffffffff;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

// --- writing ----------------------------------------------------------------------------------

function typeTable(vector: Vector): { code: number; type: FbTable; children: FbTable[] } {
  switch (vector.type) {
    case "int32":
    case "int64":
      return { code: TYPE.int, type: table({ kind: "i32", value: vector.type === "int32" ? 32 : 64 }, { kind: "u8", value: 1 }), children: [] };
    case "float32":
    case "float64":
      return { code: TYPE.floatingPoint, type: table({ kind: "i16", value: PRECISION[vector.type] }), children: [] };
    case "utf8":
      return { code: TYPE.utf8, type: table(), children: [] };
    case "bool":
      return { code: TYPE.bool, type: table(), children: [] };
    case "list":
      return { code: TYPE.list, type: table(), children: [fieldTable("item", vector.child)] };
  }
}

function fieldTable(name: string, vector: Vector): FbTable {
  const { code, type, children } = typeTable(vector);
  const nullable = vector.type === "utf8" && vector.values.includes(null);
  return table({ kind: "string", value: name }, { kind: "u8", value: nullable ? 1 : 0 }, { kind: "u8", value: code }, type, undefined, { kind: "tables", items: children });
}

function keyValues(metadata: Record<string, string>): FbRef {
  return { kind: "tables", items: Object.entries(metadata).map(([key, value]) => table({ kind: "string", value: key }, { kind: "string", value })) };
}

/** A column's type as the schema message encodes it (list children and utf8 nullability included). */
function typeSignature(vector: Vector): string {
  if (vector.type === "list") return `list<${typeSignature(vector.child)}>`;
  if (vector.type === "utf8") return vector.values.includes(null) ? "utf8?" : "utf8";
  return vector.type;
}

/**
 * Schema messages already encoded, by column names, types and metadata. Every rollout publishes a
 * table of the same few layouts, and laying a schema's FlatBuffer out again each time was over a
 * millisecond of CPU per publication in workerd. Kept for the isolate's life, at most 32.
 */
const schemaMessages = new Map<string, Uint8Array>();
const MAX_SCHEMA_MESSAGES = 32;

function schemaMessage(columns: Column[], metadata: Record<string, string>): Uint8Array {
  const key = JSON.stringify([columns.map((c) => [c.name, typeSignature(c.vector)]), Object.entries(metadata)]);
  const known = schemaMessages.get(key);
  if (known) return known;
  const schema = table({ kind: "i16", value: 0 }, { kind: "tables", items: columns.map((c) => fieldTable(c.name, c.vector)) }, keyValues(metadata));
  const encoded = message(HEADER.schema, schema, 0);
  schemaMessages.set(key, encoded);
  if (schemaMessages.size > MAX_SCHEMA_MESSAGES) schemaMessages.delete(schemaMessages.keys().next().value!);
  return encoded;
}

function message(headerType: number, header: FbTable, bodyLength: number): Uint8Array {
  return finishFlatBuffer(table({ kind: "i16", value: METADATA_V5 }, { kind: "u8", value: headerType }, header, { kind: "i64", value: bodyLength }));
}

function bitsOf(flags: ArrayLike<number>): Uint8Array {
  const bits = new Uint8Array(Math.ceil(flags.length / 8));
  for (let i = 0; i < flags.length; i++) if (flags[i]) bits[i >> 3]! |= 1 << (i & 7);
  return bits;
}

/** The buffers and nodes of one record batch body, in Arrow's depth-first order. */
class Body {
  readonly nodes: Array<[number, number]> = [];
  readonly buffers: Uint8Array[] = [];

  add(vector: Vector): void {
    const length = lengthOf(vector);
    if (vector.type === "utf8") {
      const nulls = vector.values.reduce((n, v) => n + (v === null ? 1 : 0), 0);
      const bytes = vector.values.map((v) => (v === null ? new Uint8Array(0) : encoder.encode(v)));
      const offsets = new Int32Array(length + 1);
      bytes.forEach((b, i) => (offsets[i + 1] = offsets[i]! + b.length));
      const data = new Uint8Array(offsets[length]!);
      bytes.forEach((b, i) => data.set(b, offsets[i]!));
      this.nodes.push([length, nulls]);
      this.buffers.push(nulls > 0 ? bitsOf(vector.values.map((v) => (v === null ? 0 : 1))) : new Uint8Array(0), bytesOf(offsets), data);
      return;
    }
    this.nodes.push([length, 0]);
    if (vector.type === "list") {
      this.buffers.push(new Uint8Array(0), bytesOf(vector.offsets));
      this.add(vector.child);
      return;
    }
    this.buffers.push(new Uint8Array(0), vector.type === "bool" ? bitsOf(vector.values) : vector.type === "int64" ? int64Bytes(vector.values) : bytesOf(vector.values));
  }
}

function bytesOf(array: ArrayBufferView): Uint8Array {
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

const pad8 = (n: number): number => Math.ceil(n / 8) * 8;

/**
 * Safe integers as little-endian int64s, each written as two 32-bit halves (two's complement for
 * negatives): a BigInt per value was most of a small table's encoding time in workerd.
 */
function int64Bytes(values: ArrayLike<number>): Uint8Array {
  const view = new DataView(new ArrayBuffer(values.length * 8));
  for (let i = 0; i < values.length; i++) {
    const value = values[i]!;
    if ((value | 0) === value) {
      // Token ids, offsets and lengths are int32s: the high half is the sign.
      view.setInt32(8 * i, value, true);
      view.setInt32(8 * i + 4, value < 0 ? -1 : 0, true);
      continue;
    }
    if (!Number.isSafeInteger(value)) throw new RangeError(`an int64 value must be a safe integer, got ${value}`);
    view.setUint32(8 * i, ((value % 2 ** 32) + 2 ** 32) % 2 ** 32, true);
    view.setInt32(8 * i + 4, Math.floor(value / 2 ** 32), true);
  }
  return new Uint8Array(view.buffer);
}

/** Node and buffer entries (lengths, counts, offsets) as int64 pairs. */
function int64Pairs(pairs: Array<[number, number]>): Uint8Array {
  return int64Bytes(pairs.flat());
}

/** Frames a message as the stream format does: continuation, metadata length, metadata, body. */
function framed(meta: Uint8Array, body: Uint8Array[]): Uint8Array[] {
  const prefix = new DataView(new ArrayBuffer(8));
  prefix.setUint32(0, CONTINUATION, true);
  prefix.setInt32(4, meta.length, true);
  return [new Uint8Array(prefix.buffer), meta, ...body];
}

/**
 * One Arrow IPC stream: a schema message (with `metadata` as its custom metadata), one record
 * batch holding `columns` (equal lengths), and the end-of-stream marker. Every body buffer is
 * 8-byte aligned, so a reader can view it in place.
 */
export function encodeArrowStream(columns: Column[], metadata: Record<string, string> = {}): Uint8Array {
  const length = columns.length > 0 ? lengthOf(columns[0]!.vector) : 0;
  for (const column of columns) if (lengthOf(column.vector) !== length) throw new RangeError(`column ${column.name} has ${lengthOf(column.vector)} values, expected ${length}`);
  const body = new Body();
  for (const column of columns) body.add(column.vector);
  const spans: Array<[number, number]> = [];
  const parts: Uint8Array[] = [];
  let offset = 0;
  for (const buffer of body.buffers) {
    spans.push([offset, buffer.length]);
    parts.push(buffer);
    const padded = pad8(buffer.length);
    if (padded > buffer.length) parts.push(new Uint8Array(padded - buffer.length));
    offset += padded;
  }
  const batch = table({ kind: "i64", value: length }, { kind: "structs", bytes: int64Pairs(body.nodes) }, { kind: "structs", bytes: int64Pairs(spans) });
  const chunks = [...framed(schemaMessage(columns, metadata), []), ...framed(message(HEADER.recordBatch, batch, offset), parts), new Uint8Array([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0])];
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

// --- reading ----------------------------------------------------------------------------------

/** A malformed stream, or one using a type this reader does not know. */
export class ArrowFormatError extends Error {
  override readonly name = "ArrowFormatError";
}

interface FieldType {
  name: string;
  empty: Vector;
  read: (batch: BatchCursor) => Vector;
}

/** Walks one record batch's nodes and buffers in order. */
class BatchCursor {
  #node = 0;
  #buffer = 0;
  constructor(readonly body: Uint8Array, readonly nodes: Array<[number, number]>, readonly buffers: Array<[number, number]>) {}
  node(): [number, number] {
    const node = this.nodes[this.#node++];
    if (!node) throw new ArrowFormatError("record batch has fewer field nodes than its schema has fields");
    return node;
  }
  buffer(): Uint8Array {
    const span = this.buffers[this.#buffer++];
    if (!span || span[0] + span[1] > this.body.length) throw new ArrowFormatError("record batch buffer missing or out of bounds");
    return this.body.subarray(span[0], span[0] + span[1]);
  }
}

type Typed = Int32Array | Float32Array | Float64Array | BigInt64Array;
type TypedCtor<T extends Typed> = { new (buffer: ArrayBufferLike, byteOffset: number, length: number): T; new (length: number): T; BYTES_PER_ELEMENT: number };

/** `length` elements of `bytes` as a typed array: a view where aligned, else a copy. */
function typed<T extends Typed>(Ctor: TypedCtor<T>, bytes: Uint8Array, length: number): T {
  if (bytes.length < length * Ctor.BYTES_PER_ELEMENT) throw new ArrowFormatError("buffer shorter than its field node says");
  if (bytes.byteOffset % Ctor.BYTES_PER_ELEMENT === 0) return new Ctor(bytes.buffer, bytes.byteOffset, length);
  const copy = new Ctor(length);
  new Uint8Array(copy.buffer).set(bytes.subarray(0, length * Ctor.BYTES_PER_ELEMENT));
  return copy;
}

function unbits(bits: Uint8Array, length: number): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = (bits[i >> 3]! >> (i & 7)) & 1;
  return out;
}

function noNulls(nullCount: number, name: string): void {
  if (nullCount > 0) throw new ArrowFormatError(`column ${name} has nulls; only utf8 columns may`);
}

function fieldType(field: FbReader): FieldType {
  const name = field.string(0) ?? "";
  const code = field.u8(2);
  const type = field.table(3);
  if (code === TYPE.int && type) {
    const bits = type.i32(0);
    if (bits !== 32 && bits !== 64) throw new ArrowFormatError(`column ${name}: int${bits} is not supported`);
    return {
      name,
      empty: bits === 32 ? { type: "int32", values: new Int32Array(0) } : { type: "int64", values: new Float64Array(0) },
      read: (batch) => {
        const [length, nulls] = batch.node();
        noNulls(nulls, name);
        batch.buffer();
        if (bits === 32) return { type: "int32", values: typed(Int32Array, batch.buffer(), length) };
        return { type: "int64", values: Float64Array.from(typed(BigInt64Array, batch.buffer(), length), Number) };
      },
    };
  }
  if (code === TYPE.floatingPoint && type) {
    const precision = type.i16(0);
    if (precision !== PRECISION.float32 && precision !== PRECISION.float64) throw new ArrowFormatError(`column ${name}: half floats are not supported`);
    const single = precision === PRECISION.float32;
    return {
      name,
      empty: single ? { type: "float32", values: new Float32Array(0) } : { type: "float64", values: new Float64Array(0) },
      read: (batch) => {
        const [length, nulls] = batch.node();
        noNulls(nulls, name);
        batch.buffer();
        return single ? { type: "float32", values: typed(Float32Array, batch.buffer(), length) } : { type: "float64", values: typed(Float64Array, batch.buffer(), length) };
      },
    };
  }
  if (code === TYPE.bool) {
    return {
      name,
      empty: { type: "bool", values: new Uint8Array(0) },
      read: (batch) => {
        const [length, nulls] = batch.node();
        noNulls(nulls, name);
        batch.buffer();
        return { type: "bool", values: unbits(batch.buffer(), length) };
      },
    };
  }
  if (code === TYPE.utf8) {
    return {
      name,
      empty: { type: "utf8", values: [] },
      read: (batch) => {
        const [length, nulls] = batch.node();
        const validity = batch.buffer();
        const offsets = typed(Int32Array, batch.buffer(), length + 1);
        const data = batch.buffer();
        const valid = nulls > 0 ? unbits(validity, length) : undefined;
        return { type: "utf8", values: Array.from({ length }, (_, i) => (valid && !valid[i] ? null : decoder.decode(data.subarray(offsets[i]!, offsets[i + 1]!)))) };
      },
    };
  }
  if (code === TYPE.list) {
    const child = field.tables(5)[0];
    if (!child) throw new ArrowFormatError(`list column ${name} has no child field`);
    const item = fieldType(child);
    return {
      name,
      empty: { type: "list", offsets: new Int32Array(1), child: item.empty },
      read: (batch) => {
        const [length, nulls] = batch.node();
        noNulls(nulls, name);
        batch.buffer();
        const offsets = typed(Int32Array, batch.buffer(), length + 1);
        return { type: "list", offsets, child: item.read(batch) };
      },
    };
  }
  throw new ArrowFormatError(`column ${name}: Arrow type ${code} is not supported`);
}

/** Reads an Arrow IPC stream whose columns are of the types above; record batches are concatenated. */
export function decodeArrowStream(bytes: Uint8Array): ArrowTable {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 0;
  let fields: FieldType[] | undefined;
  let metadata: Record<string, string> = {};
  const batches: Vector[][] = [];
  let rows = 0;
  while (pos + 4 <= bytes.length) {
    let size = view.getInt32(pos, true);
    pos += 4;
    if (size === -1) {
      if (pos + 4 > bytes.length) break;
      size = view.getInt32(pos, true);
      pos += 4;
    }
    if (size === 0) break;
    if (size < 0 || pos + size > bytes.length) throw new ArrowFormatError("message metadata runs past the end of the stream");
    const msg = FbReader.root(bytes.subarray(pos, pos + size));
    pos += size;
    const bodyLength = msg.i64(3);
    const body = bytes.subarray(pos, pos + bodyLength);
    if (body.length < bodyLength) throw new ArrowFormatError("message body runs past the end of the stream");
    pos += bodyLength;
    const header = msg.table(2);
    if (!header) throw new ArrowFormatError("message without a header");
    if (msg.u8(1) === HEADER.schema) {
      fields = header.tables(1).map(fieldType);
      metadata = Object.fromEntries(header.tables(2).map((kv) => [kv.string(0) ?? "", kv.string(1) ?? ""]));
    } else if (msg.u8(1) === HEADER.recordBatch) {
      if (!fields) throw new ArrowFormatError("record batch before the schema");
      if (header.table(3)) throw new ArrowFormatError("compressed record batches are not supported");
      const cursor = new BatchCursor(body, header.int64Pairs(1), header.int64Pairs(2));
      rows += header.i64(0);
      batches.push(fields.map((f) => f.read(cursor)));
    } else {
      throw new ArrowFormatError(`unsupported message type ${msg.u8(1)}`);
    }
  }
  if (!fields) throw new ArrowFormatError("stream has no schema");
  const columns = fields.map((f, i) => ({ name: f.name, vector: batches.length === 1 ? batches[0]![i]! : concatVectors(batches.map((b) => b[i]!), f.empty) }));
  return { columns, length: rows, metadata };
}
