/**
 * @module Writing Arrow IPC streams (`application/vnd.apache.arrow.stream`) of flat columns: the
 * binary feed format. Only what the feed needs: int32/int64/float32/float64/bool/utf8 columns and
 * lists of them, no dictionaries, no compression, little-endian. pyarrow's `ipc.open_stream` reads
 * the output; `arrow-read.ts` reads it back.
 */
import { CONTINUATION, HEADER, METADATA_V5, PRECISION, TYPE } from "./arrow-format";
import { finishFlatBuffer, table, type FbRef, type FbTable } from "./flatbuffer-writer";
import { Body, int64Pairs, pad8 } from "./arrow-body";
import { lengthOf, type Column, type Vector } from "./vectors";

function typeTable(vector: Vector): { code: number; type: FbTable; children: FbTable[] } {
  switch (vector.type) {
    case "int32":
    case "int64":
      return {
        code: TYPE.int,
        type: table(
          { kind: "i32", value: vector.type === "int32" ? 32 : 64 },
          { kind: "u8", value: 1 },
        ),
        children: [],
      };
    case "float32":
    case "float64":
      return {
        code: TYPE.floatingPoint,
        type: table({ kind: "i16", value: PRECISION[vector.type] }),
        children: [],
      };
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
  return table(
    { kind: "string", value: name },
    { kind: "u8", value: nullable ? 1 : 0 },
    { kind: "u8", value: code },
    type,
    undefined,
    { kind: "tables", items: children },
  );
}

function keyValues(metadata: Record<string, string>): FbRef {
  return {
    kind: "tables",
    items: Object.entries(metadata).map(([key, value]) =>
      table({ kind: "string", value: key }, { kind: "string", value }),
    ),
  };
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

/** Metadata longer than this (a pull's JSON part, unique per pull) is encoded without the cache: keying it would copy it twice and keep 32 of them. */
const MAX_CACHED_METADATA = 4096;

function schemaMessage(columns: Column[], metadata: Record<string, string>): Uint8Array {
  const entries = Object.entries(metadata);
  if (entries.reduce((n, [k, v]) => n + k.length + v.length, 0) > MAX_CACHED_METADATA) {
    return message(
      HEADER.schema,
      table(
        { kind: "i16", value: 0 },
        { kind: "tables", items: columns.map((c) => fieldTable(c.name, c.vector)) },
        keyValues(metadata),
      ),
      0,
    );
  }
  const key = JSON.stringify([columns.map((c) => [c.name, typeSignature(c.vector)]), entries]);
  const known = schemaMessages.get(key);
  if (known) return known;
  const schema = table(
    { kind: "i16", value: 0 },
    { kind: "tables", items: columns.map((c) => fieldTable(c.name, c.vector)) },
    keyValues(metadata),
  );
  const encoded = message(HEADER.schema, schema, 0);
  schemaMessages.set(key, encoded);
  if (schemaMessages.size > MAX_SCHEMA_MESSAGES)
    schemaMessages.delete(schemaMessages.keys().next().value!);
  return encoded;
}

function message(headerType: number, header: FbTable, bodyLength: number): Uint8Array {
  return finishFlatBuffer(
    table({ kind: "i16", value: METADATA_V5 }, { kind: "u8", value: headerType }, header, {
      kind: "i64",
      value: bodyLength,
    }),
  );
}

/** Frames a message as the stream format does: continuation, metadata length, metadata, body. */
function framed(meta: Uint8Array, body: Uint8Array[]): Uint8Array[] {
  const prefix = new DataView(new ArrayBuffer(8));
  prefix.setUint32(0, CONTINUATION, true);
  prefix.setInt32(4, meta.length, true);
  return [new Uint8Array(prefix.buffer), meta, ...body];
}

/** The end-of-stream marker (continuation, then a zero metadata length). */
export const ARROW_EOS = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);

/**
 * The columns' names and types as one string (`name:type,…`; `list<int32>`, `utf8?` for a
 * nullable string): two streams whose record batches may follow one schema have the same one.
 */
export function columnsSignature(columns: Column[]): string {
  return columns.map((c) => `${c.name}:${typeSignature(c.vector)}`).join(",");
}

/**
 * The framed schema message of `columns` (only their types and, for utf8, whether a value is
 * null are read, so a column may stand for a type without holding real values).
 */
export function encodeSchemaFrame(
  columns: Column[],
  metadata: Record<string, string> = {},
): Uint8Array[] {
  return framed(schemaMessage(columns, metadata), []);
}

/** One framed record batch message holding `columns` (equal lengths); every body buffer 8-byte aligned. */
export function encodeRecordBatchFrame(columns: Column[]): Uint8Array[] {
  const length = columns.length > 0 ? lengthOf(columns[0]!.vector) : 0;
  for (const column of columns)
    if (lengthOf(column.vector) !== length)
      throw new RangeError(
        `column ${column.name} has ${lengthOf(column.vector)} values, expected ${length}`,
      );
  const body = new Body();
  for (const column of columns) body.add(column.vector);
  const spans: Array<[number, number]> = [];
  let bodyLength = 0;
  for (const buffer of body.buffers) {
    spans.push([bodyLength, buffer.length]);
    bodyLength += pad8(buffer.length);
  }
  const batch = table(
    { kind: "i64", value: length },
    { kind: "structs", bytes: int64Pairs(body.nodes) },
    { kind: "structs", bytes: int64Pairs(spans) },
  );
  const meta = message(HEADER.recordBatch, batch, bodyLength);
  // Continuation, metadata length, metadata, body: one buffer, zeroed, so padding needs no writes.
  const out = new Uint8Array(8 + meta.length + bodyLength);
  const view = new DataView(out.buffer);
  view.setUint32(0, CONTINUATION, true);
  view.setInt32(4, meta.length, true);
  out.set(meta, 8);
  const start = 8 + meta.length;
  body.buffers.forEach((buffer, i) => buffer.write(out, view, start + spans[i]![0]));
  return [out];
}

/** Chunks back to back in one buffer. */
export function joinChunks(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/**
 * One Arrow IPC stream: a schema message (with `metadata` as its custom metadata), one record
 * batch holding `columns` (equal lengths), and the end-of-stream marker. Every body buffer is
 * 8-byte aligned, so a reader can view it in place.
 */
export function encodeArrowStream(
  columns: Column[],
  metadata: Record<string, string> = {},
): Uint8Array {
  const batch = encodeRecordBatchFrame(columns);
  return joinChunks([...encodeSchemaFrame(columns, metadata), ...batch, ARROW_EOS]);
}
