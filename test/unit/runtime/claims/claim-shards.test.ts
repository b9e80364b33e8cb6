import { describe, expect, it } from "vitest";
import {
  CLAIM_SHARDS,
  claimQueueName,
  shardOf,
  shardVisitOrder,
} from "../../../../src/runtime/claims/claim-shards";

describe("claim shards (unit)", () => {
  it("puts a rollout on the same shard every time, and spreads a batch over all shards", () => {
    const ids = Array.from({ length: 400 }, (_, i) => `batch-1:${Math.floor(i / 4)}:${i % 4}`);
    expect(ids.map(shardOf)).toEqual(ids.map(shardOf));
    const counts = new Array(CLAIM_SHARDS).fill(0);
    for (const id of ids) counts[shardOf(id)]++;
    expect(Math.min(...counts)).toBeGreaterThan(400 / CLAIM_SHARDS / 2);
  });

  it("visits every shard once from a random start", () => {
    const order = shardVisitOrder(() => 0.99);
    expect(order[0]).toBe(CLAIM_SHARDS - 1);
    expect([...order].sort((a, b) => a - b)).toEqual(
      Array.from({ length: CLAIM_SHARDS }, (_, i) => i),
    );
  });

  it("names one object per agent and shard", () => {
    expect(claimQueueName("calc", 3)).toBe("calc#3");
    expect(
      new Set([claimQueueName("a", 1), claimQueueName("a", 2), claimQueueName("b", 1)]).size,
    ).toBe(3);
  });
});
