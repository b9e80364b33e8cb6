/** @module Reading a verl RL dataset (JSONL or parquet bytes) into validated rows, naming each bad row. */
import { DatasetRow, MAX_BATCH_ROWS } from "../../schemas/batch";
import { jsonNestingDepth, MAX_JSON_DEPTH } from "../../schemas/json";
import { readParquetRecords } from "./parquet-records";

/** Largest dataset object read into memory (a Worker has 128 MB; decoding needs room too). */
export const MAX_DATASET_BYTES = 32 * 1024 * 1024;
/** Bad rows reported per dataset; the first ones are enough to fix a file. */
const MAX_REPORTED_ISSUES = 20;

/** One problem with a dataset: `row` is 0-based (as in `rows.<i>`), `line` 1-based (JSONL only). */
export interface DatasetIssue {
  path: string;
  message: string;
  row?: number;
  line?: number;
  field?: string;
}

/** The dataset's rows, or what is wrong with it. */
export type DatasetReadResult =
  { ok: true; rows: DatasetRow[] } | { ok: false; errors: DatasetIssue[] };

/** A decoded record and where it came from. */
interface SourceRecord {
  value: unknown;
  line?: number;
}

/** The format a dataset key names by its extension, or null. */
export function datasetFormat(key: string): "jsonl" | "parquet" | null {
  if (key.endsWith(".jsonl")) return "jsonl";
  if (key.endsWith(".parquet")) return "parquet";
  return null;
}

function whole(key: string, message: string): DatasetReadResult {
  return { ok: false, errors: [{ path: "dataset_key", message: `${key}: ${message}` }] };
}

function where(row: number, line: number | undefined): string {
  return line === undefined ? `row ${row}` : `row ${row} (line ${line})`;
}

/** One JSON document per non-blank line; a line that does not parse is reported, never thrown. */
function jsonlRecords(
  bytes: ArrayBuffer,
  rowEnd: number,
): { records: SourceRecord[]; issues: DatasetIssue[] } | string {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return "is not valid UTF-8";
  }
  const records: SourceRecord[] = [];
  const issues: DatasetIssue[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length && records.length < rowEnd; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    const row = records.length;
    if (jsonNestingDepth(line, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
      records.push({ value: undefined, line: i + 1 });
      issues.push({
        path: "dataset_key",
        row,
        line: i + 1,
        message: `${where(row, i + 1)}: nested deeper than ${MAX_JSON_DEPTH} levels`,
      });
      continue;
    }
    try {
      records.push({ value: JSON.parse(line), line: i + 1 });
    } catch {
      records.push({ value: undefined, line: i + 1 });
      issues.push({
        path: "dataset_key",
        row,
        line: i + 1,
        message: `${where(row, i + 1)}: not valid JSON`,
      });
    }
  }
  return { records, issues };
}

/**
 * Decodes and validates the rows of dataset `key` (`.jsonl` or `.parquet`). Reads at most `limit`
 * rows (and never more than MAX_BATCH_ROWS); bad rows are reported with their row number, line and
 * field, up to 20 of them.
 */
export async function readDataset(
  bytes: ArrayBuffer,
  key: string,
  options: { limit?: number } = {},
): Promise<DatasetReadResult> {
  const format = datasetFormat(key);
  if (!format) return whole(key, "dataset_key must end in .jsonl or .parquet");
  if (bytes.byteLength > MAX_DATASET_BYTES)
    return whole(
      key,
      `is ${bytes.byteLength} bytes; datasets are read whole and may be at most ${MAX_DATASET_BYTES} bytes (split it)`,
    );
  // One row past the cap tells "too many rows" apart from "exactly the cap".
  const rowEnd = Math.min(options.limit ?? Number.POSITIVE_INFINITY, MAX_BATCH_ROWS + 1);
  let records: SourceRecord[];
  const issues: DatasetIssue[] = [];
  if (format === "jsonl") {
    const decoded = jsonlRecords(bytes, rowEnd);
    if (typeof decoded === "string") return whole(key, decoded);
    records = decoded.records;
    issues.push(...decoded.issues);
  } else {
    const decoded = await readParquetRecords(bytes, rowEnd);
    if (!decoded.ok) return whole(key, `is not a readable parquet file (${decoded.message})`);
    records = decoded.records.map((value) => ({ value }));
  }
  if (records.length === 0) return whole(key, "has no rows");
  if (records.length > MAX_BATCH_ROWS)
    return whole(
      key,
      `has more than ${MAX_BATCH_ROWS} rows; set limit or split the dataset into several batches`,
    );
  const rows: DatasetRow[] = [];
  records.forEach((record, row) => {
    if (record.value === undefined) return;
    const parsed = DatasetRow.safeParse(record.value);
    if (parsed.success) {
      rows.push(parsed.data);
      return;
    }
    for (const issue of parsed.error.issues) {
      const field = issue.path.map(String).join(".") || "(row)";
      issues.push({
        path: "dataset_key",
        row,
        ...(record.line === undefined ? {} : { line: record.line }),
        field,
        message: `${where(row, record.line)}: ${field}: ${issue.message}`,
      });
    }
  });
  if (issues.length > 0) return { ok: false, errors: issues.slice(0, MAX_REPORTED_ISSUES) };
  return { ok: true, rows };
}
