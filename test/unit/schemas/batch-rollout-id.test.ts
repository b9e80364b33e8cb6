import { describe, expect, it } from "vitest";
import {
  batchRolloutId,
  groupOf,
  parseBatchRolloutId,
} from "../../../src/schemas/batch-rollout-id";

describe("batch rollout ids (unit)", () => {
  it("parses back what it builds, batch ids with colons and dots included", () => {
    for (const batchId of ["gsm8k-0", "cli-1.chunk0", "run:7"]) {
      const id = batchRolloutId(batchId, 12, 3);
      expect(parseBatchRolloutId(id)).toEqual({
        batch_id: batchId,
        uid: `${batchId}:12`,
        row_index: 12,
        sample_index: 3,
      });
    }
  });

  it("reads nothing off ids that are not a batch slot's own: lone rollouts, re-runs, tree children", () => {
    for (const id of ["solo-rollout", "b:1", "b:1:2.retry-1", "b:1:2.t3-0", "b:x:2", ":1:2"])
      expect(parseBatchRolloutId(id)).toBeNull();
  });

  it("reads the GRPO group off a batch rollout id, and treats other ids as a group of one", () => {
    expect(groupOf("cli-1.chunk0:12:3")).toEqual({ uid: "cli-1.chunk0:12", sample_index: 3 });
    expect(groupOf("solo-rollout")).toEqual({ uid: "solo-rollout", sample_index: 0 });
  });
});
