import { describe, expect, it } from "vitest";
import { TtlCache } from "../../../src/online";

describe("the isolate's TTL cache (unit)", () => {
  it("answers a kept value until its TTL passes, then loads again; forget drops it at once", async () => {
    let now = 0;
    let loads = 0;
    const cache = new TtlCache<number>(1_000, () => now);
    const load = async () => ++loads;
    expect(await cache.get("k", load)).toBe(1);
    now = 999;
    expect(await cache.get("k", load)).toBe(1);
    now = 1_000;
    expect(await cache.get("k", load)).toBe(2);
    cache.forget("k");
    expect(await cache.get("k", load)).toBe(3);
  });

  it("keeps no failed load", async () => {
    const cache = new TtlCache<number>(1_000, () => 0);
    await expect(cache.get("k", () => Promise.reject(new Error("down")))).rejects.toThrow("down");
    expect(await cache.get("k", async () => 7)).toBe(7);
  });
});
