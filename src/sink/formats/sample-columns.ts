/**
 * @module Training samples as Arrow columns: the binary layout the feed stores at publication
 * (`rollouts/<id>/samples.arrow`) and serves to trainers. One row per sample; token ids, mask
 * and logprobs are ragged list columns (one flat little-endian buffer plus offsets each).
 */
import { TRAINING_SAMPLE_SCHEMA_VERSION, type TrainingSample } from "../../schemas/training-sample";
import { ArrowFormatError, type ArrowTable } from "./arrow/arrow-format";
import { encodeArrowStream } from "./arrow/arrow-ipc";
import { decodeArrowStream } from "./arrow/arrow-read";
import { concatVectors, type Column, type Vector } from "./arrow/vectors";

/** Version of the sample table's column layout, in the schema metadata under SAMPLE_TABLE_VERSION_KEY. */
export const SAMPLE_TABLE_SCHEMA_VERSION = 1;
/** Schema metadata key of the layout version. */
export const SAMPLE_TABLE_VERSION_KEY = "edge_rollout.sample_table.schema_version";
/** Schema metadata key of the TrainingSample schema version every row carries. */
const SAMPLE_VERSION_KEY = "edge_rollout.training_sample.schema_version";

/**
 * The columns, in order. Token ids are int32 unless an id does not fit (then int64); logprobs are
 * float32 when every value is exactly a float32 (as vLLM's are), else float64: never lossy.
 * `response_mask` is a bool list (1 bit a token); `extra_fields` is each sample's JSON object.
 */
export const SAMPLE_COLUMNS = [
  "uid",
  "sample_index",
  "rollout_id",
  "segment_index",
  "prompt_ids",
  "response_ids",
  "response_mask",
  "response_logprobs",
  "reward_score",
  "num_turns",
  "termination_reason",
  "policy_version_start",
  "policy_version_end",
  "extra_fields",
] as const;
type SampleColumnName = (typeof SAMPLE_COLUMNS)[number];

function ints(values: number[]): Vector {
  return { type: "int64", values: Float64Array.from(values) };
}

function strings(values: Array<string | null>): Vector {
  return { type: "utf8", values };
}

/**
 * A list column of `rows`: offsets, and the values copied row by row into one typed array by
 * `child` (given the total length). `rows.flat()` and `TypedArray.from` went through V8's generic
 * paths and were most of a one-sample table's encoding.
 */
function ragged(rows: number[][], child: (rows: number[][], total: number) => Vector): Vector {
  const offsets = new Int32Array(rows.length + 1);
  for (let i = 0; i < rows.length; i++) offsets[i + 1] = offsets[i]! + rows[i]!.length;
  return { type: "list", offsets, child: child(rows, offsets[rows.length]!) };
}

/** `rows` back to back in `out` (its length is their total). */
function fill<T extends Int32Array | Float32Array | Float64Array | Uint8Array>(
  out: T,
  rows: number[][],
): T {
  let at = 0;
  for (const row of rows) for (let i = 0; i < row.length; i++) out[at++] = row[i]!;
  return out;
}

/**
 * Copies `rows` into `out` and tells whether every value came through unchanged: an id int32
 * cannot hold wraps, a logprob float32 cannot hold rounds. Either way the caller stores the whole
 * column wider.
 */
function holdsExactly(out: Int32Array | Float32Array, rows: number[][]): boolean {
  let at = 0;
  for (const row of rows)
    for (let i = 0; i < row.length; i++) {
      out[at] = row[i]!;
      if (out[at++] !== row[i]) return false;
    }
  return true;
}

function tokenIds(rows: number[][], total: number): Vector {
  const values = new Int32Array(total);
  return holdsExactly(values, rows)
    ? { type: "int32", values }
    : { type: "int64", values: fill(new Float64Array(total), rows) };
}

function logprobs(rows: number[][], total: number): Vector {
  const values = new Float32Array(total);
  return holdsExactly(values, rows)
    ? { type: "float32", values }
    : { type: "float64", values: fill(new Float64Array(total), rows) };
}

/** The samples as the table's columns, in SAMPLE_COLUMNS order. */
export function samplesToColumns(samples: readonly TrainingSample[]): Column[] {
  const vectors: Record<SampleColumnName, Vector> = {
    uid: strings(samples.map((s) => s.uid)),
    sample_index: ints(samples.map((s) => s.sample_index)),
    rollout_id: strings(samples.map((s) => s.rollout_id)),
    segment_index: ints(samples.map((s) => s.segment_index)),
    prompt_ids: ragged(
      samples.map((s) => s.prompt_ids),
      tokenIds,
    ),
    response_ids: ragged(
      samples.map((s) => s.response_ids),
      tokenIds,
    ),
    response_mask: ragged(
      samples.map((s) => s.response_mask),
      (rows, total) => ({ type: "bool", values: fill(new Uint8Array(total), rows) }),
    ),
    response_logprobs: ragged(
      samples.map((s) => s.response_logprobs),
      logprobs,
    ),
    reward_score: {
      type: "float64",
      values: Float64Array.from(samples.map((s) => s.reward_score)),
    },
    num_turns: ints(samples.map((s) => s.num_turns)),
    termination_reason: strings(samples.map((s) => s.termination_reason)),
    policy_version_start: ints(samples.map((s) => s.policy_version.start)),
    policy_version_end: ints(samples.map((s) => s.policy_version.end)),
    // Per-token versions (present only on samples whose tokens span versions) ride in extra_fields,
    // so the column layout, and every table stored before them, stays as it is.
    extra_fields: strings(
      samples.map((s) =>
        JSON.stringify(
          s.response_policy_versions
            ? { ...s.extra_fields, response_policy_versions: s.response_policy_versions }
            : s.extra_fields,
        ),
      ),
    ),
  };
  return SAMPLE_COLUMNS.map((name) => ({ name, vector: vectors[name] }));
}

/** Schema metadata of a sample table, plus `extra`. */
export function sampleTableMetadata(extra: Record<string, string> = {}): Record<string, string> {
  return {
    [SAMPLE_TABLE_VERSION_KEY]: String(SAMPLE_TABLE_SCHEMA_VERSION),
    [SAMPLE_VERSION_KEY]: String(TRAINING_SAMPLE_SCHEMA_VERSION),
    ...extra,
  };
}

/** The Arrow IPC stream of one rollout's samples, as publication stores it. */
export function encodeSampleTable(samples: readonly TrainingSample[]): Uint8Array {
  return encodeArrowStream(samplesToColumns(samples), sampleTableMetadata());
}

/** A stored sample table's columns by name, checked against the layout this code reads. */
export function readSampleTable(bytes: Uint8Array): ArrowTable {
  const table = decodeArrowStream(bytes);
  const version = table.metadata[SAMPLE_TABLE_VERSION_KEY];
  if (version !== String(SAMPLE_TABLE_SCHEMA_VERSION))
    throw new ArrowFormatError(
      `sample table layout version ${version ?? "(none)"}; this code reads ${SAMPLE_TABLE_SCHEMA_VERSION}`,
    );
  const names = table.columns.map((c) => c.name);
  if (names.join() !== SAMPLE_COLUMNS.join())
    throw new ArrowFormatError(`sample table columns are ${names.join(", ")}`);
  return table;
}

type Flat = Exclude<Vector, { type: "list" } | { type: "utf8" }>;

function column(table: ArrowTable, name: SampleColumnName): Vector {
  return table.columns[SAMPLE_COLUMNS.indexOf(name)]!.vector;
}

/** The samples of a sample table (the JSON pull's shape), with plain arrays. */
export function columnsToSamples(table: ArrowTable): TrainingSample[] {
  const text = (name: SampleColumnName) =>
    (column(table, name) as Extract<Vector, { type: "utf8" }>).values;
  const num = (name: SampleColumnName) => (column(table, name) as Flat).values;
  const list = (name: SampleColumnName) => {
    const v = column(table, name) as Extract<Vector, { type: "list" }>;
    const values = (v.child as Flat).values;
    return (row: number) => Array.from(values.subarray(v.offsets[row]!, v.offsets[row + 1]!));
  };
  const [uid, rolloutId, reason, extra] = [
    text("uid"),
    text("rollout_id"),
    text("termination_reason"),
    text("extra_fields"),
  ];
  const [sampleIndex, segment, reward, turns, start, end] = [
    num("sample_index"),
    num("segment_index"),
    num("reward_score"),
    num("num_turns"),
    num("policy_version_start"),
    num("policy_version_end"),
  ];
  const [prompt, response, mask, lps] = [
    list("prompt_ids"),
    list("response_ids"),
    list("response_mask"),
    list("response_logprobs"),
  ];
  return Array.from({ length: table.length }, (_, i) => {
    const { response_policy_versions: versions, ...fields } = JSON.parse(
      extra[i]!,
    ) as TrainingSample["extra_fields"];
    return {
      schema_version: TRAINING_SAMPLE_SCHEMA_VERSION,
      uid: uid[i]!,
      sample_index: sampleIndex[i]!,
      rollout_id: rolloutId[i]!,
      segment_index: segment[i]!,
      prompt_ids: prompt(i),
      response_ids: response(i),
      response_mask: mask(i) as Array<0 | 1>,
      response_logprobs: lps(i),
      reward_score: reward[i]!,
      num_turns: turns[i]!,
      termination_reason: reason[i] as TrainingSample["termination_reason"],
      policy_version: { start: start[i]!, end: end[i]! },
      ...(Array.isArray(versions) ? { response_policy_versions: versions as number[] } : {}),
      extra_fields: fields,
    };
  });
}

/** `table` with each row's `extra_fields` replaced by `update(parsed)` (flags a failed member's samples). */
export function withExtraFields(
  table: ArrowTable,
  update: (fields: Record<string, unknown>) => Record<string, unknown>,
): ArrowTable {
  const at = SAMPLE_COLUMNS.indexOf("extra_fields");
  const values = (table.columns[at]!.vector as Extract<Vector, { type: "utf8" }>).values.map(
    (text) => JSON.stringify(update(JSON.parse(text!) as Record<string, unknown>)),
  );
  return {
    ...table,
    columns: table.columns.map((c, i) =>
      i === at ? { name: c.name, vector: strings(values) } : c,
    ),
  };
}

/** Sample tables back to back, as one table's columns (list offsets rebased, types widened where they differ). */
export function concatSampleTables(tables: ArrowTable[]): Column[] {
  const empty = samplesToColumns([]);
  return SAMPLE_COLUMNS.map((name, i) => ({
    name,
    vector: concatVectors(
      tables.map((t) => t.columns[i]!.vector),
      empty[i]!.vector,
    ),
  }));
}
