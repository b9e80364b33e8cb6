import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SampleArrowDir } from "../../../tools/cli/sample-arrow-dir";
import { TrainingSample } from "../../../src/schemas/training-sample";
import {
  columnsToSamples,
  encodeSampleTable,
  readSampleTable,
} from "../../../src/sink/formats/sample-columns";

function sample(rollout: string, segment: number): TrainingSample {
  return TrainingSample.parse({
    uid: "g",
    sample_index: 0,
    rollout_id: rollout,
    segment_index: segment,
    prompt_ids: [1],
    response_ids: [2, 3],
    response_mask: [1, 0],
    response_logprobs: [-0.5, 0],
    reward_score: 1,
    num_turns: 1,
    termination_reason: "ENV_DONE",
    policy_version: { start: 0, end: 0 },
  });
}

describe("SampleArrowDir", () => {
  it("writes one part per pull and never a sample twice, across reopenings", () => {
    const dir = join(mkdtempSync(join(tmpdir(), "arrow-dir-")), "out");
    const first = SampleArrowDir.open(dir);
    expect(first.append(encodeSampleTable([sample("a", 0), sample("a", 1)]))).toEqual({
      written: 2,
      skipped: 0,
    });
    const reopened = SampleArrowDir.open(dir);
    expect(reopened.existing).toBe(2);
    expect(reopened.append(encodeSampleTable([sample("a", 1), sample("b", 0)]))).toEqual({
      written: 1,
      skipped: 1,
    });
    expect(reopened.append(encodeSampleTable([sample("b", 0)]))).toEqual({
      written: 0,
      skipped: 1,
    });
    expect(readdirSync(dir).sort()).toEqual(["part-000001.arrows", "part-000002.arrows"]);
    const second = columnsToSamples(
      readSampleTable(new Uint8Array(readFileSync(join(dir, "part-000002.arrows")))),
    );
    expect(second).toEqual([sample("b", 0)]);
  });

  it("removes a part a crash left half written, and refuses a file where a folder belongs", () => {
    const root = mkdtempSync(join(tmpdir(), "arrow-dir-"));
    const dir = join(root, "out");
    SampleArrowDir.open(dir);
    writeFileSync(join(dir, ".part-000001.arrows.tmp"), "partial");
    expect(SampleArrowDir.open(dir).repairedBytes).toBe(7);
    expect(readdirSync(dir)).toEqual([]);
    writeFileSync(join(root, "file"), "");
    expect(() => SampleArrowDir.open(join(root, "file"))).toThrow("is not a folder");
  });
});
