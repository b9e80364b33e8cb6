import { describe, expect, it } from "vitest";
import { fnv1a32 } from "../../src/fnv1a";
import { claimShardOf, shardIndexOf } from "../../src/runtime/object-names";

describe("fnv1a32", () => {
  it("matches FNV-1a's published 32-bit vectors (ASCII: one code unit per byte)", () => {
    expect(fnv1a32("")).toBe(0x811c9dc5);
    expect(fnv1a32("a")).toBe(0xe40c292c);
    expect(fnv1a32("foobar")).toBe(0xbf9cf968);
  });

  it("keeps every rollout on the shard it had before the hash was shared (a move would orphan admissions and offers)", () => {
    // What the separate copies (admission-fence.ts, claim-shards.ts) computed for these ids
    // before src/runtime/object-names.ts held the one rule.
    expect(shardIndexOf("rollout-1", 16)).toBe(4);
    expect([shardIndexOf("r-abc", 7), shardIndexOf("r-abd", 7)]).toEqual([5, 5]);
    expect(claimShardOf("rollout-1")).toBe(4);
  });
});
