/**
 * @module Training samples as one parquet file (hyparquet-writer, pure JS): the columns of the feed's
 * sample table, token ids / mask / logprobs as parquet LIST columns, one row per sample. pyarrow,
 * pandas and Hugging Face `datasets` (what verl's dataset classes load parquet with) read it.
 */
import { parquetWriteBuffer } from "hyparquet-writer";
import type { TrainingSample } from "../../src/schemas/training-sample";

type Leaf = "INT32" | "INT64" | "DOUBLE";

/** A required 3-level parquet LIST of `leaf` (`<name>.list.element`), as pyarrow writes lists. */
function listOf(name: string, leaf: Leaf) {
  return [
    { name, repetition_type: "REQUIRED", converted_type: "LIST", num_children: 1 },
    { name: "list", repetition_type: "REPEATED", num_children: 1 },
    { name: "element", type: leaf, repetition_type: "REQUIRED" },
  ] as const;
}

const INT32_MAX = 2 ** 31 - 1;
const INT32_MIN = -(2 ** 31);

/** INT32 when every id fits, else INT64 (values as BigInt, as the writer takes them). */
function ids(rows: number[][]): { leaf: Leaf; data: unknown[] } {
  const fits = rows.every((row) => row.every((id) => id >= INT32_MIN && id <= INT32_MAX));
  return fits
    ? { leaf: "INT32", data: rows }
    : { leaf: "INT64", data: rows.map((row) => row.map(BigInt)) };
}

const bigints = (values: number[]) => values.map(BigInt);

/** The parquet file of `samples` (logprobs as DOUBLE: exact whatever precision they came in). */
export function samplesToParquet(samples: readonly TrainingSample[]): ArrayBuffer {
  const prompt = ids(samples.map((s) => s.prompt_ids));
  const response = ids(samples.map((s) => s.response_ids));
  const utf8 = (name: string, optional = false) =>
    ({
      name,
      type: "BYTE_ARRAY",
      converted_type: "UTF8",
      repetition_type: optional ? "OPTIONAL" : "REQUIRED",
    }) as const;
  const int64 = (name: string) => ({ name, type: "INT64", repetition_type: "REQUIRED" }) as const;
  const schema = [
    { name: "root", num_children: 15 },
    utf8("uid"),
    int64("sample_index"),
    utf8("rollout_id"),
    int64("segment_index"),
    ...listOf("prompt_ids", prompt.leaf),
    ...listOf("response_ids", response.leaf),
    ...listOf("response_mask", "INT32"),
    ...listOf("response_logprobs", "DOUBLE"),
    { name: "reward_score", type: "DOUBLE", repetition_type: "REQUIRED" },
    int64("num_turns"),
    utf8("termination_reason", true),
    int64("policy_version_start"),
    int64("policy_version_end"),
    utf8("extra_fields"),
    // The version of each response token when a weight sync cut and resumed a call (partial
    // rollouts); null when every token came from policy_version_start.
    {
      name: "response_policy_versions",
      repetition_type: "OPTIONAL",
      converted_type: "LIST",
      num_children: 1,
    },
    { name: "list", repetition_type: "REPEATED", num_children: 1 },
    { name: "element", type: "INT64", repetition_type: "REQUIRED" },
  ];
  return parquetWriteBuffer({
    columnData: [
      { name: "uid", data: samples.map((s) => s.uid) },
      { name: "sample_index", data: bigints(samples.map((s) => s.sample_index)) },
      { name: "rollout_id", data: samples.map((s) => s.rollout_id) },
      { name: "segment_index", data: bigints(samples.map((s) => s.segment_index)) },
      { name: "prompt_ids", data: prompt.data },
      { name: "response_ids", data: response.data },
      { name: "response_mask", data: samples.map((s) => s.response_mask) },
      { name: "response_logprobs", data: samples.map((s) => s.response_logprobs) },
      { name: "reward_score", data: samples.map((s) => s.reward_score) },
      { name: "num_turns", data: bigints(samples.map((s) => s.num_turns)) },
      { name: "termination_reason", data: samples.map((s) => s.termination_reason) },
      { name: "policy_version_start", data: bigints(samples.map((s) => s.policy_version.start)) },
      { name: "policy_version_end", data: bigints(samples.map((s) => s.policy_version.end)) },
      { name: "extra_fields", data: samples.map((s) => JSON.stringify(s.extra_fields)) },
      {
        name: "response_policy_versions",
        data: samples.map((s) =>
          s.response_policy_versions ? bigints(s.response_policy_versions) : null,
        ),
      },
    ],
    schema: schema as never,
  });
}
