import { describe, expect, it } from "vitest";
import { RESULT_MESSAGE_SCHEMA_VERSION, ResultMessage } from "../../../src/schemas/result-message";
import { RolloutGroup } from "../../../src/schemas/rollout-group";

/** Queues cap a message at 128 KB. */
const QUEUE_MESSAGE_LIMIT = 128 * 1024;

describe("ResultMessage bounds (issue 10 item 4)", () => {
  it("keeps the largest message a group can produce far under a queue message's 128 KB", () => {
    const group = RolloutGroup.parse({
      uid: "u".repeat(300),
      sample_index: 0,
      group_size: 1024,
      batch_id: "b".repeat(160),
      training_mode: "m".repeat(100),
      data_manager: "d".repeat(64),
    });
    const key = "k".repeat(1024);
    const message = ResultMessage.parse({
      schema_version: RESULT_MESSAGE_SCHEMA_VERSION,
      rollout_id: "r".repeat(256),
      status: "failed",
      termination_reason: "MAX_PROMPT_LENGTH",
      reward: -1.2345678901234567e-300,
      ...group,
      policy_version_start: Number.MAX_SAFE_INTEGER,
      policy_version_end: Number.MAX_SAFE_INTEGER,
      key,
      atif_key: key,
      samples: Number.MAX_SAFE_INTEGER,
      finished_at: Date.now(),
    });
    expect(new TextEncoder().encode(JSON.stringify(message)).byteLength).toBeLessThan(
      QUEUE_MESSAGE_LIMIT / 16,
    );
  });

  it("refuses a group whose batch_id or training_mode is 140,000 characters", () => {
    const base = { uid: "u", sample_index: 0, group_size: 2 };
    expect(
      RolloutGroup.safeParse({ ...base, batch_id: "b".repeat(140_000) }).error?.issues[0]?.path,
    ).toEqual(["batch_id"]);
    expect(
      RolloutGroup.safeParse({ ...base, training_mode: "m".repeat(140_000) }).error?.issues[0]
        ?.path,
    ).toEqual(["training_mode"]);
  });
});
