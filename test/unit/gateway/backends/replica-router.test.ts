import { describe, expect, it } from "vitest";
import { ReplicaRouter, rendezvousOrder } from "../../../../src/gateway/backends";
import { manualClock } from "./backend-fixtures";

const URLS = ["http://gpu-0:8000", "http://gpu-1:8000/v1", "http://gpu-2:8000/"];
const [A, B, C] = ["http://gpu-0:8000/v1", "http://gpu-1:8000/v1", "http://gpu-2:8000/v1"] as const;

/** A router whose probe answers from `up` and counts calls; the probe resolves only when `release()` is called if `hold` is set. */
function routerWith(options: { up?: (url: string) => boolean; hold?: boolean } = {}) {
  const clock = manualClock();
  const probes: string[] = [];
  const pending: Array<() => void> = [];
  const router = new ReplicaRouter(URLS, {
    loadFactor: 1.25,
    now: clock.now,
    probe: (replica) => {
      probes.push(replica.url);
      const ok = options.up?.(replica.url) ?? true;
      return options.hold
        ? new Promise((resolve) => pending.push(() => resolve(ok)))
        : Promise.resolve(ok);
    },
  });
  return { router, clock, probes, releaseProbes: () => pending.splice(0).forEach((go) => go()) };
}

/** A rollout id whose rendezvous ranking starts with `url`. */
function rolloutPreferring(url: string, prefix = "r"): string {
  for (let i = 0; ; i++) {
    const id = `${prefix}-${i}`;
    if (
      rendezvousOrder(
        id,
        [A, B, C].map((u) => ({ url: u })),
      )[0]!.url === url
    )
      return id;
  }
}

describe("ReplicaRouter", () => {
  it("caps concurrent first calls at ⌈1.25·(in flight + 1)/3⌉ per replica: 30 calls land 4..13 per replica", async () => {
    const { router } = routerWith();
    const leases = await Promise.all(
      Array.from({ length: 30 }, (_, i) => router.acquire(`load-${i}`)),
    );
    const counts = [A, B, C].map((url) => leases.filter((lease) => lease.url === url).length);
    expect(counts.reduce((a, b) => a + b)).toBe(30);
    for (const count of counts) {
      expect(count).toBeGreaterThanOrEqual(4);
      expect(count).toBeLessThanOrEqual(13);
    }
    expect(router.health().map((h) => h.in_flight)).toEqual(counts);
    for (const lease of leases) lease.release("ok");
    expect(router.health().map((h) => h.in_flight)).toEqual([0, 0, 0]);
  });

  it("keeps a hinted rollout on its replica even when that replica is the busiest", async () => {
    const { router } = routerWith();
    const busy = await Promise.all(Array.from({ length: 6 }, () => router.acquire("other", A)));
    const lease = await router.acquire(rolloutPreferring(B), "http://gpu-0:8000");
    expect(lease.url).toBe(A);
    for (const held of [...busy, lease]) held.release("ok");
  });

  it("skips a failed replica until its cooldown passes, then readmits it after one successful probe", async () => {
    const { router, clock, probes } = routerWith();
    const id = rolloutPreferring(B);
    (await router.acquire(id)).release("failed");
    expect((await router.acquire(id)).url).not.toBe(B);
    clock.advance(4_999);
    expect((await router.acquire(rolloutPreferring(B, "s"))).url).not.toBe(B);
    expect(probes).toEqual([]);
    clock.advance(1);
    expect((await router.acquire(rolloutPreferring(B, "t"))).url).toBe(B);
    expect(probes).toEqual([B]);
    expect(router.health().find((h) => h.replica === B)?.healthy).toBe(true);
  });

  it("probes a replica at most once at a time and doubles the cooldown when the probe fails", async () => {
    const { router, clock, probes, releaseProbes } = routerWith({
      up: (url) => url !== B,
      hold: true,
    });
    (await router.acquire(rolloutPreferring(B))).release("failed");
    clock.advance(5_000);
    const racing = Array.from({ length: 5 }, (_, i) =>
      router.acquire(rolloutPreferring(B, `race${i}`)),
    );
    releaseProbes();
    const leases = await Promise.all(racing);
    expect(probes).toEqual([B]);
    expect(leases.every((lease) => lease.url !== B)).toBe(true);
    clock.advance(9_999);
    await router.acquire(rolloutPreferring(B, "u"));
    expect(probes).toHaveLength(1);
    clock.advance(1);
    const next = router.acquire(rolloutPreferring(B, "v"));
    releaseProbes();
    await next;
    expect(probes).toEqual([B, B]);
  });

  it("counts a burst of failures from calls already in flight as one", async () => {
    const { router, clock, probes } = routerWith();
    const id = rolloutPreferring(B);
    const burst = await Promise.all(Array.from({ length: 4 }, () => router.acquire(id, B)));
    for (const lease of burst) lease.release("failed");
    clock.advance(5_000);
    expect((await router.acquire(rolloutPreferring(B, "w"))).url).toBe(B);
    expect(probes).toEqual([B]);
  });

  it("tries the replica that failed longest ago when every replica is down", async () => {
    const { router, clock } = routerWith();
    for (const url of [B, A, C]) {
      (await router.acquire("x", url)).release("failed");
      clock.advance(100);
    }
    expect(router.health().every((h) => !h.healthy)).toBe(true);
    expect((await router.acquire("anyone")).url).toBe(B);
  });

  it("stops counting a lease that never settles after 15 minutes", async () => {
    const { router, clock } = routerWith();
    await router.acquire("lost", A);
    expect(router.health()[0]!.in_flight).toBe(1);
    clock.advance(15 * 60_000);
    expect(router.health()[0]!.in_flight).toBe(0);
  });
});
