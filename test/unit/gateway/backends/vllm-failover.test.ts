import { afterEach, describe, expect, it } from "vitest";
import { backendRegistry, rendezvousOrder } from "../../../../src/gateway/backends";
import type { ModelBackend } from "../../../../src/gateway/model-backend";
import { withRetries } from "../../../../src/gateway/retry";
import { type VllmSimulator, startVllmSimulator } from "../../../../tools/simulator";
import { chatBody, depsWith, manualClock } from "./backend-fixtures";

const ROLLOUTS = Array.from({ length: 30 }, (_, i) => `rollout-${i}`);
const RETRY = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2 };

/** Three simulators behind one `vllm` backend whose clock the test moves. */
async function startPool() {
  const sims = await Promise.all([1, 2, 3].map((seed) => startVllmSimulator({ port: 0, seed })));
  const clock = manualClock();
  const backend = backendRegistry.create(
    { name: "vllm", replicas: sims.map((sim) => sim.url), routing: { policy: "hash" } },
    depsWith(clock.now),
  );
  return { sims, urls: sims.map((sim) => `${sim.url}/v1`), clock, backend };
}

/** One turn as the gateway runs it: retried on retryable faults, with the rollout's last replica as hint. */
async function turn(backend: ModelBackend, rolloutId: string, hint: string | null) {
  const { value, attempts } = await withRetries(RETRY, undefined, () =>
    backend.request("/chat/completions", chatBody(`${rolloutId} says hi`), {
      rolloutId,
      replicaHint: hint,
    }),
  );
  return { replica: value.replica, attempts };
}

const healthOf = (backend: ModelBackend, url: string) =>
  backend.health!().find((h) => h.replica === url)?.healthy;
const open: VllmSimulator[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((sim) => sim.close()));
});

describe("vllm backend when a replica goes away", () => {
  it("moves only the closed replica's rollouts, after one failed attempt, and keeps them where they moved", async () => {
    const { sims, urls, backend } = await startPool();
    open.push(...sims);
    const home = new Map<string, string>();
    for (const id of ROLLOUTS) home.set(id, (await turn(backend, id, null)).replica);
    const victim = urls[1]!;
    await sims[1]!.close();

    const moved = new Map<string, string>();
    let failedAttempts = 0;
    for (const id of ROLLOUTS) {
      const { replica, attempts } = await turn(backend, id, home.get(id)!);
      failedAttempts += attempts - 1;
      if (home.get(id) === victim) moved.set(id, replica);
      else expect(replica, id).toBe(home.get(id));
    }
    expect(moved.size).toBeGreaterThan(0);
    expect([...moved.values()].every((replica) => replica !== victim)).toBe(true);
    // Only the first call to reach the dead replica fails; it is skipped from then on.
    expect(failedAttempts).toBe(1);
    expect(healthOf(backend, victim)).toBe(false);
    for (const [id, replica] of moved)
      expect((await turn(backend, id, replica)).replica).toBe(replica);
  });

  it("readmits a restarted replica only after its cooldown and one successful /health probe", async () => {
    const { sims, urls, clock, backend } = await startPool();
    open.push(sims[0]!, sims[2]!);
    const victim = urls[1]!;
    const prefersVictim = (prefix: string) =>
      Array.from({ length: 200 }, (_, i) => `${prefix}-${i}`).find(
        (id) =>
          rendezvousOrder(
            id,
            urls.map((url) => ({ url })),
          )[0]!.url === victim,
      )!;
    const pinned = prefersVictim("pinned");
    expect((await turn(backend, pinned, null)).replica).toBe(victim);
    await sims[1]!.close();
    const movedTo = (await turn(backend, pinned, victim)).replica;
    expect(movedTo).not.toBe(victim);

    const restarted = await startVllmSimulator({ port: sims[1]!.port, seed: 2 });
    open.push(restarted);
    expect((await turn(backend, prefersVictim("early"), null)).replica).not.toBe(victim);
    expect(restarted.stats().byEndpoint["GET /health"]).toBeUndefined();

    clock.advance(5_000);
    expect((await turn(backend, prefersVictim("late"), null)).replica).toBe(victim);
    expect(restarted.stats().byEndpoint["GET /health"]).toBe(1);
    expect(healthOf(backend, victim)).toBe(true);
    // The moved rollout's prefix cache now lives where it moved: its hint keeps it there.
    expect((await turn(backend, pinned, movedTo)).replica).toBe(movedTo);
  });
});
