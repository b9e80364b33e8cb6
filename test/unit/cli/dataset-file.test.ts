import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { readDatasetFile } from "../../../tools/cli/dataset-file";
import { OperationError, UsageError } from "../../../tools/cli/errors";

const fixtures = resolve(import.meta.dirname, "../../fixtures/datasets");

function tempDataset(name: string, text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "cli-dataset-")), name);
  writeFileSync(path, text);
  return path;
}

describe("reading a verl dataset file from disk (unit)", () => {
  it("reads the parquet and the JSONL fixture into the same rows", async () => {
    const parquet = await readDatasetFile(join(fixtures, "calculator.parquet"));
    const jsonl = await readDatasetFile(join(fixtures, "calculator.jsonl"));
    expect(parquet.format).toBe("parquet");
    expect(parquet.rows).toHaveLength(16);
    expect(jsonl.rows).toHaveLength(16);
    expect(parquet.rows[1]).toMatchObject({
      reward_model: { ground_truth: "35" },
      extra_info: { index: 1 },
    });
  });

  it("reads only the first --limit rows", async () => {
    expect(
      (await readDatasetFile(join(fixtures, "calculator.parquet"), { limit: 3 })).rows,
    ).toHaveLength(3);
    expect(
      (await readDatasetFile(join(fixtures, "calculator.jsonl"), { limit: 5 })).rows,
    ).toHaveLength(5);
  });

  it("names each bad row with its line and field, and submits nothing", async () => {
    const path = tempDataset(
      "bad.jsonl",
      [
        '{"prompt": "ok", "reward_model": {"ground_truth": 1}}',
        "",
        "{not json",
        '{"prompt": "", "reward_model": {}}',
      ].join("\n"),
    );
    const error = await readDatasetFile(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OperationError);
    const paths = ((error as OperationError).details as Array<{ path: string }>).map((d) => d.path);
    expect(paths).toEqual([
      "row 1 (line 3)",
      "row 2 (line 4) prompt",
      "row 2 (line 4) reward_model.ground_truth",
    ]);
  });

  it("treats a missing file or another extension as a usage error", async () => {
    await expect(readDatasetFile("/nonexistent/data.jsonl")).rejects.toThrow(UsageError);
    await expect(readDatasetFile(tempDataset("rows.csv", "a,b"))).rejects.toThrow(
      ".jsonl or .parquet",
    );
  });
});
