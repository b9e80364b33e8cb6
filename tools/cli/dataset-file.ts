/** @module Reading a verl RL dataset file (.jsonl or .parquet) from disk and checking every row. */
import { existsSync, readFileSync, statSync } from "node:fs";
import { DatasetRow } from "../../src/schemas/batch";
import type { JsonValue } from "../../src/schemas/json";
import { datasetFormat } from "../../src/sink/formats/dataset-reader";
import { readParquetRecords } from "../../src/sink/formats/parquet-records";
import { OperationError, UsageError } from "./errors";

/** Bad rows listed per file; the first ones are enough to fix it. */
const MAX_REPORTED = 20;

/** One problem with a row: `row` 0-based as the API names `rows.<i>`, `line` 1-based (JSONL). */
export interface RowIssue {
  path: string;
  message: string;
}

/** A dataset as read from disk: the records as written (sent to the API unchanged), in file order. */
export interface DatasetFile {
  path: string;
  format: "jsonl" | "parquet";
  rows: JsonValue[];
}

/** JSONL records `[0, limit)`: one JSON document per non-blank line, with its line number. */
function jsonlRecords(
  text: string,
  limit: number,
  issues: RowIssue[],
): Array<{ value: JsonValue | undefined; line: number }> {
  const records: Array<{ value: JsonValue | undefined; line: number }> = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length && records.length < limit; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    try {
      records.push({ value: JSON.parse(line) as JsonValue, line: i + 1 });
    } catch {
      records.push({ value: undefined, line: i + 1 });
      issues.push({ path: `row ${records.length - 1} (line ${i + 1})`, message: "not valid JSON" });
    }
  }
  return records;
}

/**
 * Reads the first `limit` rows of a `.jsonl` or `.parquet` file (parquet through hyparquet, as the
 * Worker reads it) and validates each against verl's RL row schema. A missing file or another
 * extension is a usage error; bad rows are an OperationError listing up to 20 of them.
 */
export async function readDatasetFile(
  path: string,
  options: { limit?: number | undefined } = {},
): Promise<DatasetFile> {
  const format = datasetFormat(path);
  if (!format) throw new UsageError(`${path}: the dataset must be a .jsonl or .parquet file`);
  if (!existsSync(path) || !statSync(path).isFile()) throw new UsageError(`${path}: no such file`);
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const issues: RowIssue[] = [];
  let records: Array<{ value: JsonValue | undefined; line?: number }>;
  const bytes = readFileSync(path);
  if (format === "jsonl") {
    records = jsonlRecords(bytes.toString("utf8"), limit, issues);
  } else {
    const buffer = bytes.buffer.slice(
      bytes.byteOffset,
      bytes.byteOffset + bytes.byteLength,
    ) as ArrayBuffer;
    const decoded = await readParquetRecords(buffer, limit);
    if (!decoded.ok)
      throw new OperationError(`${path}: not a readable parquet file (${decoded.message})`, {
        hint: "parquet files must be uncompressed or snappy (pyarrow's default)",
      });
    records = decoded.records.map((value) => ({ value }));
  }
  if (records.length === 0) throw new OperationError(`${path}: the dataset has no rows`);
  records.forEach((record, row) => {
    if (record.value === undefined) return;
    const parsed = DatasetRow.safeParse(record.value);
    if (parsed.success) return;
    const where = record.line === undefined ? `row ${row}` : `row ${row} (line ${record.line})`;
    for (const issue of parsed.error.issues)
      issues.push({
        path: `${where} ${issue.path.map(String).join(".") || "(row)"}`,
        message: issue.message,
      });
  });
  if (issues.length > 0) {
    throw new OperationError(
      `${path}: ${issues.length} problem(s) in the dataset; nothing was submitted`,
      { details: issues.slice(0, MAX_REPORTED) },
    );
  }
  return { path, format, rows: records.map((record) => record.value as JsonValue) };
}
