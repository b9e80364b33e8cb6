import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readDataset } from "../../../src/sink/formats/dataset-reader";
import { toPlainJson } from "../../../src/sink/formats/parquet-records";

const dir = new URL("../../fixtures/datasets/", import.meta.url);

function fixture(name: string): ArrayBuffer {
  const bytes = readFileSync(new URL(name, dir));
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
}

function text(body: string): ArrayBuffer {
  return new TextEncoder().encode(body).buffer as ArrayBuffer;
}

const goodRow = {
  prompt: [{ role: "user", content: "What is 2 + 2?" }],
  data_source: "t",
  ability: "math",
  reward_model: { style: "rule", ground_truth: "4" },
  extra_info: { index: 0 },
};

describe("readDataset", () => {
  it("reads the 16 calculator rows of the JSONL fixture in verl's RL shape", async () => {
    const read = await readDataset(fixture("calculator.jsonl"), "calculator.jsonl");
    if (!read.ok) throw new Error(JSON.stringify(read.errors));
    expect(read.rows).toHaveLength(16);
    expect(read.rows[1]).toMatchObject({
      data_source: "edge-rollout/calculator",
      ability: "math",
      reward_model: { style: "rule", ground_truth: "35" },
      extra_info: { index: 1, split: "train" },
    });
    expect(read.rows[3]!.prompt).toEqual([
      { role: "system", content: "You are a careful assistant." },
      { role: "user", content: "Use the calculator to compute 45 + 67 - 18." },
    ]);
  });

  it("reads the parquet fixture into the same rows as the JSONL one (INT64 index as a number)", async () => {
    const jsonl = await readDataset(fixture("calculator.jsonl"), "calculator.jsonl");
    const parquet = await readDataset(fixture("calculator.parquet"), "calculator.parquet");
    if (!jsonl.ok || !parquet.ok) throw new Error("fixtures must read");
    expect(parquet.rows).toEqual(jsonl.rows);
    expect(typeof parquet.rows[5]!.extra_info.index).toBe("number");
  });

  it("stops after limit rows, in JSONL and parquet alike", async () => {
    for (const name of ["calculator.jsonl", "calculator.parquet"]) {
      const read = await readDataset(fixture(name), name, { limit: 3 });
      expect(read.ok && read.rows.map((row) => row.extra_info.index)).toEqual([0, 1, 2]);
    }
  });

  it("names the row, line and field of each bad JSONL row and skips blank lines", async () => {
    const body = [
      JSON.stringify(goodRow),
      "",
      "{not json",
      JSON.stringify({ ...goodRow, reward_model: { style: "rule" } }),
    ].join("\n");
    const read = await readDataset(text(body), "bad.jsonl");
    expect(read.ok).toBe(false);
    if (read.ok) return;
    expect(read.errors).toEqual([
      { path: "dataset_key", row: 1, line: 3, message: "row 1 (line 3): not valid JSON" },
      {
        path: "dataset_key",
        row: 2,
        line: 4,
        field: "reward_model.ground_truth",
        message:
          "row 2 (line 4): reward_model.ground_truth: ground_truth is required (null if there is none)",
      },
    ]);
  });

  it("refuses an empty file, an unknown extension, bad UTF-8 and a corrupt parquet file without throwing", async () => {
    const cases: Array<[ArrayBuffer, string, RegExp]> = [
      [text("\n\n"), "empty.jsonl", /has no rows/],
      [text("{}"), "rows.csv", /must end in \.jsonl or \.parquet/],
      [new Uint8Array([0xff, 0xfe, 0x00]).buffer, "bytes.jsonl", /not valid UTF-8/],
      [text("PAR1 this is not parquet PAR1"), "broken.parquet", /not a readable parquet file/],
    ];
    for (const [bytes, key, message] of cases) {
      const read = await readDataset(bytes, key);
      expect(read.ok).toBe(false);
      if (!read.ok)
        expect(read.errors[0]).toMatchObject({
          path: "dataset_key",
          message: expect.stringMatching(message),
        });
    }
  });

  it("keeps unknown columns and drops null fields parquet writes into chat messages", async () => {
    const row = {
      ...goodRow,
      prompt: [{ role: "user", content: "Hi", name: null, tool_calls: null }],
      difficulty: 3,
    };
    const read = await readDataset(text(JSON.stringify(row)), "extra.jsonl");
    expect(read.ok && read.rows[0]).toMatchObject({
      prompt: [{ role: "user", content: "Hi" }],
      difficulty: 3,
    });
  });
});

describe("toPlainJson", () => {
  it("turns what hyparquet decodes into JSON values", () => {
    const value = {
      big: 7n,
      huge: 2n ** 70n,
      at: new Date(0),
      bytes: new TextEncoder().encode("hé"),
      nan: Number.NaN,
      gone: undefined,
      list: [1n, null],
    };
    expect(toPlainJson(value)).toEqual({
      big: 7,
      huge: "1180591620717411303424",
      at: "1970-01-01T00:00:00.000Z",
      bytes: "hé",
      nan: null,
      list: [1, null],
    });
  });
});
