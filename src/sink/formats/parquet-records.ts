/** @module Decoding a parquet file into plain JSON records (hyparquet, pure JS: runs in workerd). */
import { parquetReadObjects } from "hyparquet";
import type { JsonValue } from "../../schemas/json";

/** What decoding produced: one plain-JSON record per row, or why the file could not be read. */
export type ParquetRecords = { ok: true; records: JsonValue[] } | { ok: false; message: string };

/**
 * Turns what hyparquet decodes into JSON values: INT64 arrives as BigInt (a number when it is a
 * safe integer, else its decimal string), timestamps as Date (ISO string), binary columns as
 * bytes (read as UTF-8), non-finite floats as null. Undefined object fields are dropped.
 */
export function toPlainJson(value: unknown): JsonValue {
  if (value === null || value === undefined) return null;
  if (typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "bigint")
    return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (ArrayBuffer.isView(value)) return new TextDecoder().decode(value);
  if (Array.isArray(value)) return value.map(toPlainJson);
  if (typeof value === "object") {
    const entries = Object.entries(value).filter(([, field]) => field !== undefined);
    return Object.fromEntries(entries.map(([key, field]) => [key, toPlainJson(field)]));
  }
  return String(value);
}

/**
 * Decodes rows `[0, rowEnd)` of a parquet file held in memory. Uncompressed and snappy files (what
 * pyarrow and pandas write by default) decode; other codecs (zstd, gzip) need hyparquet's optional
 * compressors and are reported as unreadable.
 */
export async function readParquetRecords(
  bytes: ArrayBuffer,
  rowEnd: number,
): Promise<ParquetRecords> {
  try {
    const rows = await parquetReadObjects({ file: bytes, rowEnd });
    return { ok: true, records: rows.map(toPlainJson) };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
}
