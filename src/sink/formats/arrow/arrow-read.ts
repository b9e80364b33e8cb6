/**
 * @module Reading Arrow IPC streams: this writer's (`arrow-ipc.ts`), and any stream limited to
 * its types (int32/int64/float32/float64/bool/utf8 and lists of them, no dictionaries, no
 * compression, little-endian) in the current framing (`arrow-messages.ts` says why only that).
 * A malformed stream is an `ArrowFormatError` (`arrow-format.ts`) naming what is wrong.
 */
import { ArrowFormatError, PRECISION, TYPE, type ArrowTable } from "./arrow-format";
import { arrowMessages } from "./arrow-messages";
import type { FbReader } from "./flatbuffer-reader";
import { concatVectors, type Column, type Vector } from "./vectors";

const decoder = new TextDecoder();

interface FieldType {
  name: string;
  empty: Vector;
  read: (batch: BatchCursor) => Vector;
}

/** Walks one record batch's nodes and buffers in order. */
class BatchCursor {
  #node = 0;
  #buffer = 0;
  constructor(
    readonly body: Uint8Array,
    readonly nodes: Array<[number, number]>,
    readonly buffers: Array<[number, number]>,
  ) {}
  node(): [number, number] {
    const node = this.nodes[this.#node++];
    if (!node)
      throw new ArrowFormatError("record batch has fewer field nodes than its schema has fields");
    return node;
  }
  buffer(): Uint8Array {
    const span = this.buffers[this.#buffer++];
    if (!span || span[0] + span[1] > this.body.length)
      throw new ArrowFormatError("record batch buffer missing or out of bounds");
    return this.body.subarray(span[0], span[0] + span[1]);
  }
}

type Typed = Int32Array | Float32Array | Float64Array | BigInt64Array;
type TypedCtor<T extends Typed> = {
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): T;
  new (length: number): T;
  BYTES_PER_ELEMENT: number;
};

/** `length` elements of `bytes` as a typed array: a view where aligned, else a copy. */
function typed<T extends Typed>(Ctor: TypedCtor<T>, bytes: Uint8Array, length: number): T {
  if (bytes.length < length * Ctor.BYTES_PER_ELEMENT)
    throw new ArrowFormatError("buffer shorter than its field node says");
  if (bytes.byteOffset % Ctor.BYTES_PER_ELEMENT === 0)
    return new Ctor(bytes.buffer, bytes.byteOffset, length);
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
    if (bits !== 32 && bits !== 64)
      throw new ArrowFormatError(`column ${name}: int${bits} is not supported`);
    return {
      name,
      empty:
        bits === 32
          ? { type: "int32", values: new Int32Array(0) }
          : { type: "int64", values: new Float64Array(0) },
      read: (batch) => {
        const [length, nulls] = batch.node();
        noNulls(nulls, name);
        batch.buffer();
        if (bits === 32)
          return { type: "int32", values: typed(Int32Array, batch.buffer(), length) };
        return {
          type: "int64",
          values: Float64Array.from(typed(BigInt64Array, batch.buffer(), length), Number),
        };
      },
    };
  }
  if (code === TYPE.floatingPoint && type) {
    const precision = type.i16(0);
    if (precision !== PRECISION.float32 && precision !== PRECISION.float64)
      throw new ArrowFormatError(`column ${name}: half floats are not supported`);
    const single = precision === PRECISION.float32;
    return {
      name,
      empty: single
        ? { type: "float32", values: new Float32Array(0) }
        : { type: "float64", values: new Float64Array(0) },
      read: (batch) => {
        const [length, nulls] = batch.node();
        noNulls(nulls, name);
        batch.buffer();
        return single
          ? { type: "float32", values: typed(Float32Array, batch.buffer(), length) }
          : { type: "float64", values: typed(Float64Array, batch.buffer(), length) };
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
        return {
          type: "utf8",
          values: Array.from({ length }, (_, i) =>
            valid && !valid[i] ? null : decoder.decode(data.subarray(offsets[i]!, offsets[i + 1]!)),
          ),
        };
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
  // The walk yields the schema before any batch and throws when there is none, so this start is never read.
  let fields: FieldType[] = [];
  let metadata: Record<string, string> = {};
  const batches: Vector[][] = [];
  let rows = 0;
  for (const message of arrowMessages(bytes)) {
    if (message.type === "schema") {
      fields = message.fields.map(fieldType);
      metadata = message.metadata;
    } else {
      const { header, body } = message;
      const cursor = new BatchCursor(body, header.int64Pairs(1), header.int64Pairs(2));
      rows += message.rows;
      batches.push(fields.map((f) => f.read(cursor)));
    }
  }
  const columns = fields.map((f, i) => ({
    name: f.name,
    vector:
      batches.length === 1
        ? batches[0]![i]!
        : concatVectors(
            batches.map((b) => b[i]!),
            f.empty,
          ),
  }));
  return { columns, length: rows, metadata };
}
