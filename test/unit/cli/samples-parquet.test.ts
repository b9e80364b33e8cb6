/** Unit: `edge-rollout export --format parquet` writes every sample field, per-token policy versions included. */
import { parquetMetadata, parquetReadObjects } from "hyparquet";
import { describe, expect, it } from "vitest";
import { samplesToParquet } from "../../../tools/cli/samples-parquet";
import { TrainingSample } from "../../../src/schemas/training-sample";

const base = {
  uid: "g",
  sample_index: 0,
  rollout_id: "r-0",
  segment_index: 0,
  prompt_ids: [1, 2],
  response_ids: [3, 4, 5],
  response_mask: [1, 1, 1],
  response_logprobs: [-0.5, -0.25, -0.125],
  reward_score: 1,
  num_turns: 1,
  termination_reason: "ENV_DONE",
  policy_version: { start: 3, end: 4 },
};

describe("samplesToParquet", () => {
  it("round-trips ids, masks, logprobs and the per-token versions of a resumed call (null where one version made every token)", async () => {
    const resumed = TrainingSample.parse({ ...base, response_policy_versions: [3, 3, 4] });
    const plain = TrainingSample.parse({
      ...base,
      sample_index: 1,
      rollout_id: "r-1",
      policy_version: { start: 3, end: 3 },
    });
    const file = samplesToParquet([resumed, plain]);
    const rows = (await parquetReadObjects({ file, metadata: parquetMetadata(file) })) as Array<
      Record<string, unknown>
    >;
    const num = (values: unknown) => (values as Array<number | bigint>).map(Number);
    expect(
      rows.map((row) => [
        row.rollout_id,
        num(row.response_ids),
        num(row.response_logprobs),
        row.response_policy_versions === null ? null : num(row.response_policy_versions),
      ]),
    ).toEqual([
      ["r-0", [3, 4, 5], [-0.5, -0.25, -0.125], [3, 3, 4]],
      ["r-1", [3, 4, 5], [-0.5, -0.25, -0.125], null],
    ]);
    expect(
      rows.map((row) => [Number(row.policy_version_start), Number(row.policy_version_end)]),
    ).toEqual([
      [3, 4],
      [3, 3],
    ]);
  });
});
