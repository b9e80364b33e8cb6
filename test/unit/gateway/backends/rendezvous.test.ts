import { describe, expect, it } from "vitest";
import { rendezvousOrder } from "../../../../src/gateway/backends";

const replicas = ["http://gpu-0:8000/v1", "http://gpu-1:8000/v1", "http://gpu-2:8000/v1"].map(
  (url) => ({ url }),
);
const keys = Array.from({ length: 3000 }, (_, i) => `rollout-${i}`);
const first = (key: string, pool = replicas) => rendezvousOrder(key, pool)[0]!.url;

describe("rendezvousOrder", () => {
  it("ranks every replica once, the same way every time", () => {
    const order = rendezvousOrder("r-1", replicas).map((r) => r.url);
    expect([...order].sort()).toEqual(replicas.map((r) => r.url));
    expect(rendezvousOrder("r-1", [...replicas].reverse()).map((r) => r.url)).toEqual(order);
  });

  it("spreads sequential rollout ids evenly: each of 3 replicas gets 1000 ± 10% of 3000", () => {
    const counts = new Map<string, number>();
    for (const key of keys) counts.set(first(key), (counts.get(first(key)) ?? 0) + 1);
    for (const replica of replicas) {
      expect(counts.get(replica.url)).toBeGreaterThan(900);
      expect(counts.get(replica.url)).toBeLessThan(1100);
    }
  });

  it("moves only the removed replica's rollouts when a replica leaves", () => {
    const survivors = replicas.filter((r) => r.url !== "http://gpu-1:8000/v1");
    for (const key of keys) {
      const before = first(key);
      if (before !== "http://gpu-1:8000/v1") expect(first(key, survivors)).toBe(before);
      else expect(first(key, survivors)).toBe(rendezvousOrder(key, replicas)[1]!.url);
    }
  });
});
