import { describe, expect, it } from "vitest";
import {
  releaseOnNextAdmission,
  type ReleasingPolicyPort,
} from "../../../src/gateway/release-on-next-admission";
import type { PolicyAdmission } from "../../../src/schemas/policy";

/**
 * A shard as the port sees it: what it was asked, in order, and its in-flight calls. `syncing`
 * refuses new calls (after applying the releases an acquire carries, as the shard does).
 */
function recordingShard(options: { version?: number; failAcquires?: number } = {}) {
  const requests: string[] = [];
  const inFlight = new Set<string>();
  const state = {
    syncing: false,
    version: options.version ?? 7,
    failAcquires: options.failAcquires ?? 0,
  };
  const port: ReleasingPolicyPort = {
    async acquire(rolloutId, callId, _ttlMs, releasing) {
      requests.push(`acquire ${callId}${releasing ? ` releasing ${releasing.join(",")}` : ""}`);
      if (state.failAcquires > 0) {
        state.failAcquires--;
        throw new Error("network connection lost");
      }
      for (const id of releasing ?? []) inFlight.delete(id);
      if (state.syncing)
        return {
          ok: false,
          reason: "syncing",
          retry_after_s: 1,
          policy_version: state.version,
        } satisfies PolicyAdmission;
      inFlight.add(callId);
      return {
        ok: true,
        policy_version: state.version,
        model: null,
        backend: null,
        sampling: { temperature: 1, top_p: 1 },
      };
    },
    async release(_rolloutId, callId) {
      requests.push(`release ${callId}`);
      inFlight.delete(callId);
      return { policy_version: state.version };
    },
  };
  return { port, requests, inFlight, state };
}

describe("releases that ride on the rollout's next admission", () => {
  it("sends one request per call: each release goes with the next acquire and answers with the version then", async () => {
    const shard = recordingShard();
    const port = releaseOnNextAdmission(shard.port, 10_000);
    await port.acquire("r1", "c1", 60_000);
    const released = port.release("r1", "c1");
    expect(shard.inFlight.has("c1")).toBe(true); // held back, not sent
    shard.state.version = 8;
    await port.acquire("r1", "c2", 60_000);
    expect(await released).toEqual({ policy_version: 8 });
    expect(shard.inFlight).toEqual(new Set(["c2"]));
    const last = port.release("r1", "c2");
    await port.flush();
    expect(await last).toEqual({ policy_version: 8 });
    expect(shard.requests).toEqual(["acquire c1", "acquire c2 releasing c1", "release c2"]);
    expect(shard.inFlight.size).toBe(0);
  });

  it("sends a release on its own once it has waited the grace period, and never holds one of another rollout", async () => {
    const shard = recordingShard();
    // A grace far longer than the steps before the first check take even on a loaded machine (30 ms
    // was not); the release is then awaited, not slept for, and bounded below by the grace.
    const graceMs = 400;
    const port = releaseOnNextAdmission(shard.port, graceMs);
    await port.acquire("r1", "c1", 60_000);
    const releasedAt = Date.now();
    const released = port.release("r1", "c1");
    await port.acquire("r2", "d1", 60_000); // another rollout's admission does not carry it
    expect(shard.inFlight.has("c1")).toBe(true);
    expect(await released).toEqual({ policy_version: 7 });
    expect(Date.now() - releasedAt).toBeGreaterThanOrEqual(graceMs - 5);
    expect(shard.inFlight.has("c1")).toBe(false);
    expect(shard.requests).toEqual(["acquire c1", "acquire d1", "release c1"]);
  });

  it("releases the ended calls even when the next call is refused for a weight sync", async () => {
    const shard = recordingShard();
    const port = releaseOnNextAdmission(shard.port, 10_000);
    await port.acquire("r1", "c1", 60_000);
    const released = port.release("r1", "c1");
    shard.state.syncing = true;
    expect(await port.acquire("r1", "c2", 60_000)).toMatchObject({ ok: false, reason: "syncing" });
    // The sync waits for no call of this rollout any more.
    expect(shard.inFlight.size).toBe(0);
    expect(await released).toEqual({ policy_version: 7 });
  });

  it("sends the releases again on their own when the acquire carrying them fails", async () => {
    const shard = recordingShard({ failAcquires: 1 });
    const port = releaseOnNextAdmission(shard.port, 10_000);
    shard.inFlight.add("c1");
    const released = port.release("r1", "c1");
    await expect(port.acquire("r1", "c2", 60_000)).rejects.toThrow("network connection lost");
    expect(await released).toEqual({ policy_version: 7 });
    expect(shard.inFlight.size).toBe(0);
    expect(shard.requests).toEqual(["acquire c2 releasing c1", "release c1"]);
  });

  it("rejects a held release whose own request fails, as the port's release would", async () => {
    const shard = recordingShard();
    shard.port.release = async () => {
      throw new Error("shard unreachable");
    };
    const port = releaseOnNextAdmission(shard.port, 10_000);
    const released = port.release("r1", "c1");
    await port.flush();
    await expect(released).rejects.toThrow("shard unreachable");
  });

  it("knows when every call of a rollout it admitted is released at the shard", async () => {
    const shard = recordingShard();
    const port = releaseOnNextAdmission(shard.port, 10_000);
    expect(port.releasedAll("r1")).toBe(true);
    await port.acquire("r1", "c1", 60_000);
    expect(port.releasedAll("r1")).toBe(false);
    const first = port.release("r1", "c1");
    expect(port.releasedAll("r1")).toBe(false); // held back, not landed
    await port.acquire("r1", "c2", 60_000);
    await first;
    void port.release("r1", "c2");
    await port.acquire("r2", "d1", 60_000); // another rollout's call is not this one's
    expect(port.releasedAll("r1")).toBe(false);
    await port.flush();
    expect(port.releasedAll("r1")).toBe(true);
    expect(port.releasedAll("r2")).toBe(false);
  });

  it("does not count a refused admission, and never vouches for a failed release, a call admitted again under its id or an admission in doubt", async () => {
    const refused = recordingShard();
    refused.state.syncing = true;
    const quiet = releaseOnNextAdmission(refused.port, 10_000);
    expect(await quiet.acquire("r1", "c1", 60_000)).toMatchObject({ ok: false });
    expect(quiet.releasedAll("r1")).toBe(true);

    const failing = recordingShard();
    failing.port.release = async () => {
      throw new Error("shard unreachable");
    };
    const lost = releaseOnNextAdmission(failing.port, 10_000);
    await lost.acquire("r1", "c1", 60_000);
    const released = lost.release("r1", "c1");
    await lost.flush();
    await expect(released).rejects.toThrow("shard unreachable");
    expect(lost.releasedAll("r1")).toBe(false);

    // A call cut by a sync and resumed: released and admitted again under its own id, in one request.
    const resumed = recordingShard();
    const again = releaseOnNextAdmission(resumed.port, 10_000);
    await again.acquire("r1", "c1", 60_000);
    void again.release("r1", "c1");
    await again.acquire("r1", "c1", 60_000);
    expect(resumed.inFlight.has("c1")).toBe(true);
    expect(again.releasedAll("r1")).toBe(false);

    const broken = recordingShard({ failAcquires: 1 });
    const doubt = releaseOnNextAdmission(broken.port, 10_000);
    await expect(doubt.acquire("r1", "c1", 60_000)).rejects.toThrow("network connection lost");
    expect(doubt.releasedAll("r1")).toBe(false);
  });
});
