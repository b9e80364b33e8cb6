import { describe, expect, it } from "vitest";
import {
  encodeArrowStream,
  encodeRecordBatchFrame,
  encodeSchemaFrame,
  joinChunks,
} from "../../../../src/sink/formats/arrow/arrow-ipc";
import { splitArrowStream } from "../../../../src/sink/formats/arrow/arrow-frames";
import { ArrowFormatError } from "../../../../src/sink/formats/arrow/arrow-format";
import { decodeArrowStream } from "../../../../src/sink/formats/arrow/arrow-read";
import type { Column } from "../../../../src/sink/formats/arrow/vectors";
import {
  concatSampleTables,
  encodeSampleTable,
  readSampleTable,
  columnsToSamples,
  samplesToColumns,
} from "../../../../src/sink/formats/sample-columns";
import { TrainingSample } from "../../../../src/schemas/training-sample";

const plain = (value: unknown) =>
  JSON.parse(
    JSON.stringify(value, (_k, v) => (ArrayBuffer.isView(v) ? Array.from(v as Uint8Array) : v)),
  );

function sample(overrides: Partial<TrainingSample>): TrainingSample {
  return TrainingSample.parse({
    uid: "g",
    sample_index: 0,
    rollout_id: "g:0",
    segment_index: 0,
    prompt_ids: [1, 2],
    response_ids: [3, 4],
    response_mask: [1, 0],
    response_logprobs: [Math.fround(-0.5), 0],
    reward_score: 1,
    num_turns: 1,
    termination_reason: "ENV_DONE",
    policy_version: { start: 1, end: 1 },
    ...overrides,
  });
}

describe("the Arrow IPC codec", () => {
  it("reads back every column type it writes, with nulls, empty lists and schema metadata", () => {
    const columns: Column[] = [
      { name: "i32", vector: { type: "int32", values: Int32Array.from([1, -2, 3, 4]) } },
      {
        name: "i64",
        vector: { type: "int64", values: Float64Array.from([2 ** 40, -1, 0, -(2 ** 52) - 7]) },
      },
      // int64s that fit 32 bits take a shorter path: both ends of it, and either side of them.
      {
        name: "i64-edges",
        vector: {
          type: "int64",
          values: Float64Array.from([2 ** 31 - 1, -(2 ** 31), 2 ** 31, -(2 ** 31) - 1]),
        },
      },
      {
        name: "f64",
        vector: { type: "float64", values: Float64Array.from([0.1, -0.2, 1e300, 0]) },
      },
      { name: "text", vector: { type: "utf8", values: ["a", null, "ünï", ""] } },
      {
        name: "bits",
        vector: {
          type: "list",
          offsets: Int32Array.from([0, 9, 9, 10, 10]),
          child: { type: "bool", values: Uint8Array.from([1, 0, 1, 1, 0, 0, 1, 0, 1, 1]) },
        },
      },
    ];
    const table = decodeArrowStream(encodeArrowStream(columns, { note: "x".repeat(5000) }));
    expect([table.length, table.metadata.note?.length]).toEqual([4, 5000]);
    expect(plain(table.columns)).toEqual(plain(columns));
  });

  it("gives each layout its own schema when the same layouts are written again and again", () => {
    const names = (values: Array<string | null>): Column[] => [
      { name: "s", vector: { type: "utf8", values } },
      { name: "n", vector: { type: "int32", values: Int32Array.from(values.map((_, i) => i)) } },
    ];
    const plain = names(["a", "b"]);
    const nullable = names(["a", null]);
    const wide: Column[] = [
      plain[0]!,
      { name: "n", vector: { type: "int64", values: Float64Array.from([1, 2 ** 40]) } },
    ];
    for (let round = 0; round < 2; round++) {
      expect(decodeArrowStream(encodeArrowStream(plain, { k: "1" }))).toEqual(
        decodeArrowStream(encodeArrowStream(plain, { k: "1" })),
      );
      expect(decodeArrowStream(encodeArrowStream(nullable)).columns[0]!.vector).toEqual({
        type: "utf8",
        values: ["a", null],
      });
      expect(decodeArrowStream(encodeArrowStream(wide)).columns[1]!.vector).toEqual({
        type: "int64",
        values: Float64Array.from([1, 2 ** 40]),
      });
      expect(decodeArrowStream(encodeArrowStream(plain, { k: "2" })).metadata).toEqual({ k: "2" });
    }
  });

  it("refuses a stream that is not one, naming what is wrong", () => {
    expect(() => decodeArrowStream(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]))).toThrow(
      ArrowFormatError,
    );
    expect(() => decodeArrowStream(new Uint8Array(0))).toThrow("stream has no schema");
  });

  it("reads only the current framing: both readers refuse a pre-0.15 stream without continuation markers", () => {
    const columns: Column[] = [{ name: "n", vector: { type: "int32", values: Int32Array.of(7) } }];
    const [prefix, meta] = encodeSchemaFrame(columns);
    const [batch] = encodeRecordBatchFrame(columns);
    // The legacy framing is the current one less each message's 4-byte 0xFFFFFFFF marker.
    const legacy = joinChunks([prefix!.subarray(4), meta!, batch!.subarray(4), new Uint8Array(4)]);
    const current = encodeArrowStream(columns);
    expect(splitArrowStream(current).rows).toBe(1);
    expect(decodeArrowStream(current).length).toBe(1);
    for (const read of [decodeArrowStream, splitArrowStream])
      expect(() => read(legacy)).toThrow("message without the continuation marker");
  });

  it("writes the same bytes for the same table whatever it wrote before (its header buffer is reused)", () => {
    const small = [sample({}), sample({ sample_index: 1, rollout_id: "g:1" })];
    const first = encodeSampleTable(small);
    // A larger header in between (long names, a list of strings), then one past the kept size.
    const wide: Column[] = Array.from({ length: 40 }, (_, i) => ({
      name: `column-with-a-long-name-${i}`,
      vector: { type: "utf8", values: [`value ${i}`, null] },
    }));
    decodeArrowStream(encodeArrowStream(wide, { note: "x".repeat(300) }));
    const huge = encodeArrowStream(wide, { note: "y".repeat(100_000) });
    expect(decodeArrowStream(huge).metadata.note).toHaveLength(100_000);
    const again = encodeSampleTable(small);
    expect(Array.from(again)).toEqual(Array.from(first));
    expect(columnsToSamples(readSampleTable(again))).toEqual(small);
  });
});

describe("sample tables", () => {
  it("keep ids and logprobs exact: int32 / float32 only when every value fits, wider otherwise", () => {
    const narrow = samplesToColumns([sample({})]);
    const wide = samplesToColumns([
      sample({ response_ids: [3, 2 ** 40], response_logprobs: [-0.1, 0] }),
    ]);
    const childType = (columns: Column[], name: string) =>
      (columns.find((c) => c.name === name)!.vector as { child: { type: string } }).child.type;
    expect([childType(narrow, "response_ids"), childType(narrow, "response_logprobs")]).toEqual([
      "int32",
      "float32",
    ]);
    expect([childType(wide, "response_ids"), childType(wide, "response_logprobs")]).toEqual([
      "int64",
      "float64",
    ]);
    const back = columnsToSamples(
      readSampleTable(
        encodeSampleTable([sample({ response_ids: [3, 2 ** 40], response_logprobs: [-0.1, 0] })]),
      ),
    );
    expect(back[0]).toMatchObject({ response_ids: [3, 2 ** 40], response_logprobs: [-0.1, 0] });
  });

  it("concatenate with offsets rebased and types widened, equal to the samples in order", () => {
    const a = [
      sample({}),
      sample({
        segment_index: 1,
        response_ids: [],
        response_mask: [],
        response_logprobs: [],
        termination_reason: null,
      }),
    ];
    const b = [
      sample({ uid: "h", response_logprobs: [-0.3, 0], extra_fields: { trainable: false } }),
    ];
    const tables = [a, b].map((s) => readSampleTable(encodeSampleTable(s)));
    const joined = concatSampleTables(tables);
    expect(columnsToSamples({ columns: joined, length: 3, metadata: {} })).toEqual([...a, ...b]);
  });
});
