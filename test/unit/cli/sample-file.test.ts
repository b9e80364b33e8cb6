import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OperationError } from "../../../tools/cli/errors";
import { SampleFile, sampleKey } from "../../../tools/cli/sample-file";

const sample = (rollout: string, segment = 0) => ({
  rollout_id: rollout,
  segment_index: segment,
  response_ids: [1, 2],
});
const lines = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { rollout_id: string; segment_index: number });

function tempFile(): string {
  return join(mkdtempSync(join(tmpdir(), "cli-samples-")), "out.jsonl");
}

describe("the JSONL file drain appends to (unit)", () => {
  it("writes each sample once, skipping repeats within an append and across appends", () => {
    const path = tempFile();
    const file = SampleFile.open(path);
    expect(file.append([sample("a"), sample("a", 1), sample("a")])).toEqual({
      written: 2,
      skipped: 1,
    });
    expect(file.append([sample("a", 1), sample("b")])).toEqual({ written: 1, skipped: 1 });
    file.close();
    expect(lines(path).map(sampleKey)).toEqual(["a#0", "a#1", "b#0"]);
  });

  it("remembers the samples of an existing file, so a second drain writes nothing twice", () => {
    const path = tempFile();
    const first = SampleFile.open(path);
    first.append([sample("a"), sample("b")]);
    first.close();
    const second = SampleFile.open(path);
    expect(second.existing).toBe(2);
    expect(second.has(sample("a"))).toBe(true);
    expect(second.append([sample("b"), sample("c")])).toEqual({ written: 1, skipped: 1 });
    second.close();
    expect(lines(path)).toHaveLength(3);
  });

  it("cuts a partial last line left by a crash mid-write, so its samples can be written again", () => {
    const path = tempFile();
    writeFileSync(path, `${JSON.stringify(sample("a"))}\n`);
    appendFileSync(path, '{"rollout_id":"b","segm');
    const file = SampleFile.open(path);
    expect(file.repairedBytes).toBe(23);
    expect(file.existing).toBe(1);
    expect(file.append([sample("b")])).toEqual({ written: 1, skipped: 0 });
    file.close();
    expect(lines(path).map(sampleKey)).toEqual(["a#0", "b#0"]);
  });

  it("refuses a file whose lines are not training samples", () => {
    const path = tempFile();
    writeFileSync(path, '{"hello": 1}\n');
    expect(() => SampleFile.open(path)).toThrow(OperationError);
    expect(() => SampleFile.open(path)).toThrow(/line 1 is not a training sample/);
  });
});
