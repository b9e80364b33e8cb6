import { describe, expect, it } from "vitest";
import {
  admissionShardCount,
  admissionShardName,
  admissionShardOf,
  CLAIM_SHARDS,
  claimQueueName,
  claimShardOf,
  claimShardVisitOrder,
  feedShardIndex,
  feedShardName,
  shardIndexOf,
} from "../../../src/runtime/object-names";

describe("object names and shards (unit)", () => {
  it("puts a rollout on the same claim shard every time, and spreads a batch over all shards", () => {
    const ids = Array.from({ length: 400 }, (_, i) => `batch-1:${Math.floor(i / 4)}:${i % 4}`);
    expect(ids.map(claimShardOf)).toEqual(ids.map(claimShardOf));
    const counts = new Array(CLAIM_SHARDS).fill(0);
    for (const id of ids) counts[claimShardOf(id)]++;
    expect(Math.min(...counts)).toBeGreaterThan(400 / CLAIM_SHARDS / 2);
  });

  it("visits every claim shard once from a random start", () => {
    const order = claimShardVisitOrder(() => 0.99);
    expect(order[0]).toBe(CLAIM_SHARDS - 1);
    expect([...order].sort((a, b) => a - b)).toEqual(
      Array.from({ length: CLAIM_SHARDS }, (_, i) => i),
    );
  });

  it("names one claim queue per agent and shard", () => {
    expect(claimQueueName("calc", 3)).toBe("calc#3");
    expect(
      new Set([claimQueueName("a", 1), claimQueueName("a", 2), claimQueueName("b", 1)]).size,
    ).toBe(3);
  });

  it("picks admission, claim and feed shards with the one hash, under the names they always had", () => {
    expect(admissionShardOf("rollout-1", "16")).toBe(shardIndexOf("rollout-1", 16));
    expect(claimShardOf("rollout-1")).toBe(shardIndexOf("rollout-1", CLAIM_SHARDS));
    expect(feedShardIndex("group-1", 4)).toBe(shardIndexOf("group-1", 4));
    expect([admissionShardName(3), feedShardName(2, 4), feedShardName(0, 1)]).toEqual([
      "admission-3",
      "feed-4-2",
      "default",
    ]);
  });

  it("reads ADMISSION_SHARDS as 1..256, else 16", () => {
    expect(["8", undefined, "0", "257", "2.5"].map(admissionShardCount)).toEqual([
      8, 16, 16, 16, 16,
    ]);
  });
});
