import { describe, expect, it } from "vitest";
import {
  chunkBatchIds,
  chunkRows,
  CHUNK_SUFFIX_ROOM,
  withFileIndex,
} from "../../../tools/cli/chunking";
import { OperationError } from "../../../tools/cli/errors";
import { checkBatchId } from "../../../tools/cli/options";
import { BatchId } from "../../../src/schemas/batch";

const row = (i: number, pad = 0) => ({
  prompt: `q${i}${"x".repeat(pad)}`,
  reward_model: { ground_truth: String(i) },
});

describe("splitting a dataset into batches the API accepts (unit)", () => {
  it("keeps a dataset within the limits as one chunk", () => {
    const rows = Array.from({ length: 5 }, (_, i) => row(i));
    expect(chunkRows(rows)).toEqual([rows]);
  });

  it("splits by row count and by JSON bytes, keeping the order", () => {
    const rows = Array.from({ length: 7 }, (_, i) => row(i));
    expect(chunkRows(rows, { maxRows: 3 }).map((chunk) => chunk.length)).toEqual([3, 3, 1]);
    const size = Buffer.byteLength(JSON.stringify(row(0, 100))) + 1;
    const big = Array.from({ length: 5 }, (_, i) => row(i, 100));
    const chunks = chunkRows(big, { maxBytes: size * 2 });
    expect(chunks.map((chunk) => chunk.length)).toEqual([2, 2, 1]);
    expect(chunks.flat()).toEqual(big);
  });

  it("refuses a single row larger than one request, naming it", () => {
    expect(() => chunkRows([row(0), row(1, 500)], { maxBytes: 200 })).toThrow(OperationError);
    expect(() => chunkRows([row(0), row(1, 500)], { maxBytes: 200 })).toThrow(
      /^row 1 is \d+ bytes/,
    );
  });

  it("names chunk batches <id>.chunk<k> and keeps one chunk's id as given", () => {
    expect(chunkBatchIds("b", 1)).toEqual(["b"]);
    expect(chunkBatchIds("b", 3)).toEqual(["b.chunk0", "b.chunk1", "b.chunk2"]);
    // The longest id the CLI accepts for a chunked submit still makes API-valid ids for a
    // million chunks; one character more is refused by the CLI, not by the server mid-submit.
    const longest = "b".repeat(160 - CHUNK_SUFFIX_ROOM);
    expect(checkBatchId(longest, CHUNK_SUFFIX_ROOM)).toBe(longest);
    expect(BatchId.safeParse(`${longest}.chunk999999`).success).toBe(true);
    expect(chunkBatchIds(longest, 3).every((id) => BatchId.safeParse(id).success)).toBe(true);
    expect(() => checkBatchId(`${longest}b`, CHUNK_SUFFIX_ROOM)).toThrow(
      /--batch-id must be 1-148 characters/,
    );
  });

  it("gives rows without extra_info.index their position in the file, and leaves explicit indexes alone", () => {
    expect(withFileIndex({ prompt: "p", reward_model: { ground_truth: 1 } }, 12_000)).toEqual({
      prompt: "p",
      reward_model: { ground_truth: 1 },
      extra_info: { index: 12_000 },
    });
    expect(withFileIndex({ prompt: "p", extra_info: { split: "train" } }, 3)).toEqual({
      prompt: "p",
      extra_info: { split: "train", index: 3 },
    });
    const indexed = { prompt: "p", extra_info: { index: 7 } };
    expect(withFileIndex(indexed, 3)).toBe(indexed);
  });
});
