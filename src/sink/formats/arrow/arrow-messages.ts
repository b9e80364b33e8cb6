/**
 * @module The one walk over an Arrow IPC stream's messages, shared by the decoder
 * (`arrow-read.ts`) and the pass-through splitter (`arrow-frames.ts`): each message's header,
 * its body, and the whole framed message as a view of the input, checked to be a schema first,
 * then uncompressed record batches, up to the end marker or the end of the bytes.
 *
 * It accepts only the current framing (since Arrow 0.15): the 0xFFFFFFFF continuation marker,
 * then the metadata length. It refuses the legacy framing (the length alone) because nothing
 * that reaches it writes that: our writer (`arrow-ipc.ts`) has emitted the marker since its first
 * commit, every stream these readers see (stored sample tables, group packs, pulls the CLI
 * drains) is that writer's, and pyarrow writes the legacy framing only when asked
 * (`use_legacy_format=True`); the Python client only reads pulls, and its tests' streams come
 * from `pa.ipc.new_stream` (current framing). The splitter also passes record batch frames
 * through verbatim behind a schema frame our writer makes, so a legacy frame would leave a pull
 * mixing two framings: refusing it here keeps both readers agreeing on one stream format.
 */
import { ArrowFormatError, CONTINUATION, HEADER } from "./arrow-format";
import { FbReader } from "./flatbuffer-reader";

/** One message of a stream, in stream order (the schema always comes first). */
export type ArrowMessage =
  | {
      type: "schema";
      /** The schema's `Field` tables, one a column. */
      fields: FbReader[];
      /** The schema's custom metadata. */
      metadata: Record<string, string>;
    }
  | {
      type: "recordBatch";
      /** The `RecordBatch` table: field nodes at slot 1, buffers at slot 2. */
      header: FbReader;
      /** Rows in this batch. */
      rows: number;
      /** The message body the buffers point into. */
      body: Uint8Array;
      /** The whole framed message (continuation, length, metadata, body): a view of the input. */
      frame: Uint8Array;
    };

/**
 * The messages of an Arrow IPC stream. Throws `ArrowFormatError` for a message without the
 * continuation marker, one that runs past the end, a record batch before the schema, a
 * compressed batch, another message type, or (once the walk ends) a stream with no schema.
 */
export function* arrowMessages(bytes: Uint8Array): Generator<ArrowMessage, void, undefined> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 0;
  let schema = false;
  while (pos + 8 <= bytes.length) {
    const start = pos;
    if (view.getUint32(pos, true) !== CONTINUATION)
      throw new ArrowFormatError("message without the continuation marker");
    const size = view.getInt32(pos + 4, true);
    pos += 8;
    if (size === 0) break;
    if (size < 0 || pos + size > bytes.length)
      throw new ArrowFormatError("message metadata runs past the end of the stream");
    const msg = FbReader.root(bytes.subarray(pos, pos + size));
    pos += size;
    const bodyLength = msg.i64(3);
    // A negative length would step back and walk the same bytes forever.
    if (bodyLength < 0 || pos + bodyLength > bytes.length)
      throw new ArrowFormatError("message body runs past the end of the stream");
    const body = bytes.subarray(pos, pos + bodyLength);
    pos += bodyLength;
    const header = msg.table(2);
    if (!header) throw new ArrowFormatError("message without a header");
    if (msg.u8(1) === HEADER.schema) {
      schema = true;
      yield {
        type: "schema",
        fields: header.tables(1),
        metadata: Object.fromEntries(
          header.tables(2).map((kv) => [kv.string(0) ?? "", kv.string(1) ?? ""]),
        ),
      };
    } else if (msg.u8(1) === HEADER.recordBatch) {
      if (!schema) throw new ArrowFormatError("record batch before the schema");
      if (header.table(3))
        throw new ArrowFormatError("compressed record batches are not supported");
      yield {
        type: "recordBatch",
        header,
        rows: header.i64(0),
        body,
        frame: bytes.subarray(start, pos),
      };
    } else {
      throw new ArrowFormatError(`unsupported message type ${msg.u8(1)}`);
    }
  }
  if (!schema) throw new ArrowFormatError("stream has no schema");
}
