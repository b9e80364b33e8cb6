/**
 * @module What the Arrow IPC writer (`arrow-ipc.ts`) and readers (`arrow-read.ts`,
 * `arrow-frames.ts`) share: the stream media type, the decoded table's shape, the format's
 * constants, and the error a malformed stream raises.
 */
import type { Column } from "./vectors";

/** The IANA media type of an Arrow IPC stream. */
export const ARROW_STREAM_MEDIA_TYPE = "application/vnd.apache.arrow.stream";

/** A decoded stream: its columns (record batches concatenated), row count and schema metadata. */
export interface ArrowTable {
  columns: Column[];
  length: number;
  metadata: Record<string, string>;
}

/** Arrow's metadata version 5. */
export const METADATA_V5 = 4;
/** Message header types. */
export const HEADER = { schema: 1, recordBatch: 3 } as const;
/** Field type codes (the `Type` union). */
export const TYPE = { int: 2, floatingPoint: 3, utf8: 5, bool: 6, list: 12 } as const;
/** Floating point precisions. */
export const PRECISION = { float32: 1, float64: 2 } as const;
/** The marker before each message's metadata length. */
export const CONTINUATION = 0xffffffff;

/** A malformed stream, or one using a type this reader does not know. */
export class ArrowFormatError extends Error {
  override readonly name = "ArrowFormatError";
}
