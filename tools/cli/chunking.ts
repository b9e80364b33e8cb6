/** @module Splitting a dataset into batches the API accepts: at most 10,000 rows and a bounded body each. */
import { MAX_BATCH_ROWS } from "../../src/schemas/batch";
import type { JsonObject, JsonValue } from "../../src/schemas/json";
import { OperationError } from "./errors";

/**
 * Largest JSON body of one `POST /v1/batches`. The Worker hands the rows to the batch's Durable
 * Object in one RPC, whose arguments are capped at 32 MiB; Workers also cap request bodies (100 MB
 * on the smaller plans). 24 MiB leaves room for the envelope.
 */
export const MAX_REQUEST_BYTES = 24 * 1024 * 1024;

/** Limits of one chunk. */
export interface ChunkLimits {
  /** Default MAX_BATCH_ROWS (10,000). */
  maxRows?: number;
  /** Default MAX_REQUEST_BYTES. */
  maxBytes?: number;
}

/**
 * Splits `rows` into consecutive chunks of at most `maxRows` rows and `maxBytes` of JSON each.
 * A single row larger than `maxBytes` cannot be sent and is an OperationError naming it.
 */
export function chunkRows(rows: readonly JsonValue[], limits: ChunkLimits = {}): JsonValue[][] {
  const maxRows = limits.maxRows ?? MAX_BATCH_ROWS;
  const maxBytes = limits.maxBytes ?? MAX_REQUEST_BYTES;
  const chunks: JsonValue[][] = [];
  let current: JsonValue[] = [];
  let bytes = 0;
  rows.forEach((row, index) => {
    const size = Buffer.byteLength(JSON.stringify(row)) + 1;
    if (size > maxBytes)
      throw new OperationError(
        `row ${index} is ${size} bytes of JSON; one request carries at most ${maxBytes}`,
      );
    if (current.length > 0 && (current.length >= maxRows || bytes + size > maxBytes)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(row);
    bytes += size;
  });
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** The batch id of each chunk: the id itself for one chunk, else `<id>.chunk<k>` (k from 0). */
export function chunkBatchIds(batchId: string, count: number): string[] {
  if (count === 1) return [batchId];
  return Array.from({ length: count }, (_, k) => `${batchId}.chunk${k}`);
}

/** Characters `chunkBatchIds` may append (so the id stays within the API's 160). */
export const CHUNK_SUFFIX_ROOM = ".chunk".length + 6;

/**
 * Gives a row of chunk data its position in the whole file as `extra_info.index` when it has none:
 * the server numbers rows within a batch, so without this the rows of chunk 2 would get task ids
 * 0, 1, … again.
 */
export function withFileIndex(row: JsonValue, fileIndex: number): JsonValue {
  if (typeof row !== "object" || row === null || Array.isArray(row)) return row;
  const info = row.extra_info;
  const extra: JsonObject =
    typeof info === "object" && info !== null && !Array.isArray(info) ? info : {};
  if (extra.index !== undefined && extra.index !== null && extra.index !== "") return row;
  return { ...row, extra_info: { ...extra, index: fileIndex } };
}
