import { describe, expect, it } from "vitest";
import {
  allShards,
  currentShardOf,
  feedLayout,
  isLayoutProblem,
  previousShardOf,
} from "../../../../src/runtime/feed/feed-shards";

describe("feedLayout", () => {
  it("keeps today's single feed object when FEED_SHARDS is unset or 1", () => {
    expect(feedLayout({})).toEqual({ current: ["default"], previous: [] });
    expect(feedLayout({ FEED_SHARDS: "1" })).toEqual({ current: ["default"], previous: [] });
  });

  it("names the shards of a count, and drains the previous layout's while it is set", () => {
    const layout = feedLayout({ FEED_SHARDS: "4", FEED_PREVIOUS_SHARDS: "1" });
    if (isLayoutProblem(layout)) throw new Error(layout.message);
    expect(layout).toEqual({
      current: ["feed-4-0", "feed-4-1", "feed-4-2", "feed-4-3"],
      previous: ["default"],
    });
    expect(allShards(layout)).toEqual([...layout.current, "default"]);
    expect(previousShardOf(layout, "any")).toBe("default");
  });

  it("refuses a count that is not an integer 1..256, naming the variable", () => {
    for (const raw of ["0", "257", "2.5", "four", "-1", "1e2"]) {
      expect(feedLayout({ FEED_SHARDS: raw })).toMatchObject({ variable: "FEED_SHARDS" });
    }
    expect(feedLayout({ FEED_SHARDS: "4", FEED_PREVIOUS_SHARDS: "x" })).toMatchObject({
      variable: "FEED_PREVIOUS_SHARDS",
    });
  });

  it("spreads uids over every shard and always puts one uid in the same one", () => {
    const layout = feedLayout({ FEED_SHARDS: "4" });
    if (isLayoutProblem(layout)) throw new Error(layout.message);
    const used = new Set(
      Array.from({ length: 200 }, (_, i) => currentShardOf(layout, `batch:${i}`)),
    );
    expect(used.size).toBe(4);
    expect(currentShardOf(layout, "batch:7")).toBe(currentShardOf(layout, "batch:7"));
  });
});
