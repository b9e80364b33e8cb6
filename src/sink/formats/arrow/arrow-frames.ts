/**
 * @module An Arrow IPC stream taken apart at message boundaries, without decoding a value: its
 * schema (names, types, metadata) and its record batch messages as byte ranges of the input. A
 * pull passes stored record batches through this way: a new schema message, the batches as they
 * were stored, the end marker. The walk over messages is `arrow-messages.ts`'s.
 */
import { ArrowFormatError, PRECISION, TYPE } from "./arrow-format";
import { columnsSignature } from "./arrow-ipc";
import { arrowMessages } from "./arrow-messages";
import type { FbReader } from "./flatbuffer-reader";
import type { Column, Vector } from "./vectors";

/** A stream's parts: record batches are views of the input bytes, each a whole framed message. */
export interface ArrowFrames {
  /** Schema-only columns (no values; a nullable utf8 holds one null): enough to encode the schema again. */
  columns: Column[];
  /** `columnsSignature` of the schema: streams with equal signatures can share one schema message. */
  signature: string;
  metadata: Record<string, string>;
  /** Each record batch message, framed (continuation, length, metadata, body). */
  batches: Uint8Array[];
  /** Rows over every record batch. */
  rows: number;
}

function schemaVector(field: FbReader): Vector {
  const name = field.string(0) ?? "";
  const code = field.u8(2);
  const type = field.table(3);
  if (code === TYPE.int && type && (type.i32(0) === 32 || type.i32(0) === 64)) {
    return type.i32(0) === 32
      ? { type: "int32", values: new Int32Array(0) }
      : { type: "int64", values: new Float64Array(0) };
  }
  if (
    code === TYPE.floatingPoint &&
    type &&
    (type.i16(0) === PRECISION.float32 || type.i16(0) === PRECISION.float64)
  ) {
    return type.i16(0) === PRECISION.float32
      ? { type: "float32", values: new Float32Array(0) }
      : { type: "float64", values: new Float64Array(0) };
  }
  if (code === TYPE.bool) return { type: "bool", values: new Uint8Array(0) };
  // Nullability is what the writer reads off a utf8 column's values; one null stands for it.
  if (code === TYPE.utf8) return { type: "utf8", values: field.u8(1) ? [null] : [] };
  if (code === TYPE.list) {
    const child = field.tables(5)[0];
    if (!child) throw new ArrowFormatError(`list column ${name} has no child field`);
    return { type: "list", offsets: new Int32Array(1), child: schemaVector(child) };
  }
  throw new ArrowFormatError(`column ${name}: Arrow type ${code} is not supported`);
}

/** Splits an Arrow IPC stream (this codec's types, uncompressed) into its schema and record batch messages. */
export function splitArrowStream(bytes: Uint8Array): ArrowFrames {
  // The walk yields the schema before any batch and throws when there is none, so this start is never read.
  let columns: Column[] = [];
  let metadata: Record<string, string> = {};
  const batches: Uint8Array[] = [];
  let rows = 0;
  for (const message of arrowMessages(bytes)) {
    if (message.type === "schema") {
      columns = message.fields.map((field) => ({
        name: field.string(0) ?? "",
        vector: schemaVector(field),
      }));
      metadata = message.metadata;
    } else {
      rows += message.rows;
      batches.push(message.frame);
    }
  }
  return { columns, signature: columnsSignature(columns), metadata, batches, rows };
}
