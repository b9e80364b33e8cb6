import { describe, expect, it } from "vitest";
import { HashRing } from "../../../../src/gateway/backends/hash-ring";

const replicas = (count: number) =>
  Array.from({ length: count }, (_, i) => ({ url: `http://gpu-${i}:8000/v1` }));
const KEYS = Array.from({ length: 20_000 }, (_, i) => `prefix:${i.toString(36)}`);

/** The owner (first replica) of every key in `KEYS` on `ring`. */
const owners = (ring: HashRing<{ url: string }>) => KEYS.map((key) => ring.order(key)[0]!.url);

describe("HashRing", () => {
  it("spreads keys over the replicas within 15% of an equal share", () => {
    const counts = new Map<string, number>();
    for (const owner of owners(new HashRing(replicas(4))))
      counts.set(owner, (counts.get(owner) ?? 0) + 1);
    expect(counts.size).toBe(4);
    for (const count of counts.values())
      expect(Math.abs(count / (KEYS.length / 4) - 1)).toBeLessThan(0.15);
  });

  it("gives the same key the same replica on every ring built from the same replicas, in any order", () => {
    const forward = new HashRing(replicas(4));
    const reversed = new HashRing([...replicas(4)].reverse());
    expect(owners(reversed)).toEqual(owners(forward));
  });

  it("moves only the keys a joining replica takes, about 1/N of them", () => {
    const before = owners(new HashRing(replicas(4)));
    const after = owners(new HashRing(replicas(5)));
    const movedTo = after.filter((owner, i) => owner !== before[i]);
    // Every moved key went to the new replica, and about 1/5 of them moved (modulo hashing moves ~4/5).
    expect(new Set(movedTo)).toEqual(new Set([replicas(5)[4]!.url]));
    expect(movedTo.length / KEYS.length).toBeGreaterThan(0.12);
    expect(movedTo.length / KEYS.length).toBeLessThan(0.28);
  });

  it("lists every replica once, the owner first, so a down owner's keys go to the next replica clockwise", () => {
    const ring = new HashRing(replicas(4));
    const without = new HashRing(replicas(4).filter((r) => r.url !== "http://gpu-2:8000/v1"));
    for (const key of KEYS.slice(0, 2_000)) {
      const order = ring.order(key).map((r) => r.url);
      expect(new Set(order).size).toBe(4);
      const survivor = order.find((url) => url !== "http://gpu-2:8000/v1");
      expect(without.order(key)[0]!.url).toBe(survivor);
    }
  });
});
