import { describe, expect, it } from "vitest";
import { ReplicaRouter, backendRegistry, rendezvousOrder } from "../../../../src/gateway/backends";
import { prefixKey } from "../../../../src/gateway/backends/prefix-key";
import { chooseReplica } from "../../../../src/gateway/backends/routing-policies";
import type { InvalidInputError } from "../../../../src/errors";
import type { ReplicaRouting } from "../../../../src/schemas/backend-config";
import type { JsonObject } from "../../../../src/schemas/json";
import { depsWith, manualClock } from "./backend-fixtures";

const [A, B, C] = ["http://gpu-0:8000/v1", "http://gpu-1:8000/v1", "http://gpu-2:8000/v1"] as const;
const ALL = [A, B, C];

function routerWith(routing: ReplicaRouting) {
  const clock = manualClock();
  const router = new ReplicaRouter(ALL, {
    loadFactor: 1.25,
    now: clock.now,
    probe: () => Promise.resolve(false),
    routing,
  });
  return { router, clock };
}

/** One call of `rolloutId` on `url` (its hint) that takes `ms` on the manual clock and ends "ok". */
function timedCalls({ router, clock }: ReturnType<typeof routerWith>) {
  return async (rolloutId: string, url: string, ms: number) => {
    const lease = await router.acquire(rolloutId, url);
    clock.advance(ms);
    lease.release("ok");
  };
}

/** A key whose rendezvous ranking starts with `url`. */
function keyPreferring(url: string, prefix = "k"): string {
  for (let i = 0; ; i++)
    if (
      rendezvousOrder(
        `${prefix}-${i}`,
        ALL.map((u) => ({ url: u })),
      )[0]!.url === url
    )
      return `${prefix}-${i}`;
}

const STICKY: ReplicaRouting = { policy: "sticky_least_loaded", bound: 2 };

describe("routing policies", () => {
  it("least_loaded sends every call to the replica with the fewest calls in flight, ignoring the rollout's last replica", () => {
    const loads = new Map<string, number>([
      [A, 2],
      [B, 1],
      [C, 1],
    ]);
    const ranked = rendezvousOrder(
      "r-1",
      ALL.map((url) => ({ url })),
    );
    const chosen = chooseReplica(
      { policy: "least_loaded", bound: 8 },
      { ranked, sticky: { url: A }, load: (r) => loads.get(r.url)! },
    );
    // B and C tie at 1: the tie goes to the one the key ranks first.
    expect(chosen.url).toBe(ranked.find((r) => r.url !== A)!.url);
    loads.set(C, 0);
    expect(
      chooseReplica(
        { policy: "least_loaded", bound: 8 },
        { ranked, sticky: undefined, load: (r) => loads.get(r.url)! },
      ).url,
    ).toBe(C);
  });

  it("sticky_least_loaded measures the bound against the least-loaded replica that is not markedly slow, and never sends a leaving rollout to a slow one", () => {
    const routing: ReplicaRouting = { policy: "sticky_least_loaded", bound: 16 };
    const ranked = [{ url: A }, { url: B }, { url: C }];
    // B runs at twice the fastest's time, so it took few rollouts and carries 2 calls.
    const loads = new Map<string, number>([
      [A, 30],
      [B, 2],
      [C, 25],
    ]);
    const choice = (sticky: { url: string } | undefined) => ({
      ranked,
      sticky,
      load: (r: { url: string }) => loads.get(r.url)!,
      pace: (r: { url: string }) => (r.url === B ? 2 : 1),
    });
    // 30 is within 16 of C's 25 (B's 2 does not count): the rollout stays where its cache is.
    expect(chooseReplica(routing, choice({ url: A })).url).toBe(A);
    // Past the bound it leaves for the least-loaded usable replica, C, not for idle-looking B.
    loads.set(A, 45);
    expect(chooseReplica(routing, choice({ url: A })).url).toBe(C);
    // A rollout already on B stays there while within the bound (its cache is there).
    expect(chooseReplica(routing, choice({ url: B })).url).toBe(B);
    // A new rollout whose key ranks B first goes to the first usable replica within the bound.
    loads.set(A, 30);
    const bFirst = [{ url: B }, { url: A }, { url: C }];
    expect(chooseReplica(routing, { ...choice(undefined), ranked: bFirst }).url).toBe(A);
    // With every replica markedly slow, pace no longer decides: the plain bound does.
    expect(
      chooseReplica(routing, { ...choice(undefined), ranked: [{ url: B }], pace: () => 2 }).url,
    ).toBe(B);
  });

  it("sticky_least_loaded keeps a rollout on its replica up to the bound, then moves it to the least-loaded one", async () => {
    const { router } = routerWith(STICKY);
    const home = keyPreferring(A);
    const first = await router.acquire("r-s", null, () => home);
    expect(first.url).toBe(A);
    first.release("ok");
    const held = await Promise.all([router.acquire("x-1", A), router.acquire("x-2", A)]);
    const second = await router.acquire("r-s", null, () => keyPreferring(C));
    expect(second.url).toBe(A); // 2 in flight on A, 0 elsewhere: within the bound of 2
    second.release("ok");
    held.push(await router.acquire("x-3", A));
    const third = await router.acquire("r-s");
    expect(third.url).not.toBe(A); // 3 beyond the least-loaded replica's 0
    third.release("ok");
    for (const l of held) l.release("ok");
    expect((await router.acquire("r-s")).url).toBe(third.url);
  });

  it("sticky_least_loaded places a group's members where their prompt prefix hashes, spilling to the next replica in that order past the bound", async () => {
    const { router } = routerWith(STICKY);
    const key = keyPreferring(B, "group");
    const members = [];
    for (let i = 0; i < 5; i++) members.push(await router.acquire(`member-${i}`, null, () => key));
    // B takes members while its load is within 2 of the least-loaded replica's 0: three of them;
    // the rest meet on the key's second replica.
    const second = rendezvousOrder(
      key,
      ALL.map((url) => ({ url })),
    )[1]!.url;
    expect(members.map((lease) => lease.url)).toEqual([B, B, B, second, second]);
    for (const l of members) l.release("ok");
  });

  it("sticky_least_loaded places new rollouts, and moves young ones, off a replica whose calls run markedly slower, keeps older ones there, and tries it again later", async () => {
    const routed = routerWith({ policy: "sticky_least_loaded", bound: 8 });
    const { router, clock } = routed;
    const call = timedCalls(routed);
    // A and C take 1 s a call, B (the slow one) 2 s; "old" made three calls on B, "young" two,
    // all before any call ended elsewhere (so B did not look slow yet and nobody left it).
    await call("old", B, 2_000);
    await call("old", B, 2_000);
    await call("old", B, 2_000);
    await call("young", B, 2_000);
    await call("young", B, 2_000);
    await call("warm-a", A, 1_000);
    await call("warm-c", C, 1_000);
    const key = keyPreferring(B, "slow-first");
    const elsewhere = rendezvousOrder(
      key,
      ALL.map((url) => ({ url })),
    ).find((r) => r.url !== B)!.url;
    // B ranks first for this prefix and is within the bound, but runs at twice the fastest's time.
    const placed = await router.acquire("new-1", null, () => key);
    expect(placed.url).toBe(elsewhere);
    placed.release("ok");
    // A rollout with two calls on B is placed again by its prefix, where its group's new members go.
    const young = await router.acquire("young", B, () => key);
    expect(young.url).toBe(elsewhere);
    young.release("ok");
    // One with more calls there stays (moving it would cost the cache it built).
    const old = await router.acquire("old", B, () => key);
    expect(old.url).toBe(B);
    old.release("neutral");
    // Without calls ending on B, what set it apart fades: after a few half-lives it is placed on again.
    clock.advance(4 * 30_000);
    const later = await router.acquire("new-2", null, () => key);
    expect(later.url).toBe(B);
    later.release("ok");
  });

  it("judges a replica slow against the typical replica, so one nearly idle, fast replica does not make the busy ones look slow", async () => {
    const routed = routerWith({ policy: "sticky_least_loaded", bound: 8 });
    const { router } = routed;
    const call = timedCalls(routed);
    // A is nearly idle and answers in 0.5 s; B and C are busy and take 1 s (2x A's time).
    await call("on-a", A, 500);
    await call("on-b", B, 1_000);
    await call("on-c", C, 1_000);
    // Against the fastest (A), B would count as slow and a new rollout would skip it; against
    // the median (1 s) it is typical, so the prefix's first replica takes the rollout.
    const placed = await router.acquire("new", null, () => keyPreferring(B, "busy"));
    expect(placed.url).toBe(B);
    placed.release("ok");
  });

  it("skips an unhealthy replica under every policy, even the rollout's own or the prefix's", async () => {
    for (const policy of ["hash", "least_loaded", "sticky_least_loaded"] as const) {
      const { router } = routerWith({ policy, bound: 8 });
      const victim = keyPreferring(A, "victim");
      const failed = await router.acquire(victim, A);
      expect(failed.url).toBe(A);
      failed.release("failed");
      const key = keyPreferring(A);
      const leases = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          router.acquire(i === 0 ? victim : `r-${i}`, i < 3 ? A : null, () => key),
        ),
      );
      expect(leases.map((lease) => lease.url)).not.toContain(A);
      for (const l of leases) l.release("ok");
    }
  });
});

describe("prefixKey", () => {
  const chat = (system: string, user: string, more: JsonObject[] = []): JsonObject => ({
    messages: [{ role: "system", content: system }, { role: "user", content: user }, ...more],
  });

  it("is shared by calls with one system prompt and task, whatever follows, and differs for another task", () => {
    const key = prefixKey(chat("doc", "task 1"));
    expect(
      prefixKey(
        chat("doc", "task 1", [
          { role: "assistant", content: "a" },
          { role: "user", content: "b" },
        ]),
      ),
    ).toBe(key);
    expect(prefixKey(chat("doc", "task 2"))).not.toBe(key);
    expect(prefixKey({ prompt: [1, 2, 3] })).toBe(prefixKey({ prompt: [1, 2, 3], max_tokens: 4 }));
    expect(prefixKey({ messages: [] })).toBeNull();
  });
});

describe("backend.routing validation", () => {
  const invalid = (routing: unknown) => {
    try {
      backendRegistry.create({ name: "vllm", replicas: [A], routing }, depsWith(Date.now));
    } catch (error) {
      return (error as InvalidInputError).details;
    }
    throw new Error("accepted");
  };

  it("names backend.routing.policy for an unknown policy and backend.routing.bound for a non-finite or negative bound", () => {
    expect(invalid({ policy: "round_robin" })).toEqual([
      {
        path: "backend.routing.policy",
        message: 'policy must be "hash", "prefix_hash", "least_loaded" or "sticky_least_loaded"',
      },
    ]);
    expect(invalid({ bound: Number.POSITIVE_INFINITY })).toMatchObject([
      { path: "backend.routing.bound" },
    ]);
    expect(invalid({ bound: Number.NaN })).toMatchObject([{ path: "backend.routing.bound" }]);
    expect(invalid({ bound: -1 })).toEqual([
      { path: "backend.routing.bound", message: "bound must be >= 0" },
    ]);
    expect(invalid({ policy: "hash", spread: 1 })).toEqual([
      { path: "backend.routing.spread", message: "is not a known field" },
    ]);
  });
});
