/**
 * Integration: an interrupting weight sync is not a replica failure. Streamed calls over two
 * paced simulator replicas are cut mid-generation by `sync/begin {mode: "interrupt"}` (the
 * gateway cancels each upstream read itself); both replicas must stay healthy in
 * `GET /v1/backends`, and the calls after the sync must still spread over both.
 */
import { afterEach, beforeAll, describe, expect, inject, it } from "vitest";
import type { PolicyState } from "../../../src/runtime/policy/policy-state";
import { createExternal } from "../../fixtures/external-rollouts";
import { api, getRollout, waitFor } from "../../fixtures/rollouts";
import { readPolicyState, restorePolicyState, sleep } from "../fixtures/policy-fixtures";
import { gatewayCall, post, untilInFlight } from "./partial-rollout-fixtures";

const replicas = () => [
  `${inject("pacedSimulatorUrl")}/v1`,
  `${inject("pacedPeerSimulatorUrl")}/v1`,
];

let saved: PolicyState;
beforeAll(async () => void (saved = await readPolicyState()));
afterEach(async () => restorePolicyState(saved));

/** Each replica's health and calls in flight, as `GET /v1/backends` shows them. */
async function backends(): Promise<
  Array<{ replica: string; healthy: boolean; in_flight: number }>
> {
  const view = (await (await api("/v1/backends")).json()) as {
    replicas: Array<{ replica: string; healthy: boolean; in_flight: number }>;
  };
  return view.replicas;
}

/**
 * Starts `count` streamed calls of `maxTokens` (25 ms a token) on rollouts of their own; each
 * resolves with its rollout id once read to the end.
 */
async function streamedCalls(count: number, maxTokens: number): Promise<Array<Promise<string>>> {
  const rollouts = await Promise.all(Array.from({ length: count }, () => createExternal()));
  return rollouts.map(async ({ rollout_id }, i) => {
    const result = await gatewayCall(rollout_id, {
      model: "any",
      messages: [{ role: "user", content: `Tell me story number ${i}.` }],
      max_tokens: maxTokens,
      stream: true,
    });
    if (!result.ok) throw new Error(result.error.message);
    if (!("stream" in result)) throw new Error("expected a streamed answer");
    await new Response(result.stream).text();
    return rollout_id;
  });
}

/** The replica each recorded gateway call of `rolloutId` ran on, and how often it was interrupted. */
async function recordedCalls(rolloutId: string) {
  const view = await getRollout(rolloutId);
  return view.llm_calls.map((call) => ({
    replica: call.replica,
    interrupted: call.interruption?.interrupted ?? 0,
  }));
}

describe("an interrupting weight sync over two replicas", () => {
  it("leaves both replicas healthy, and later calls still spread over both", async () => {
    const put = await api("/v1/policy", {
      method: "PUT",
      body: JSON.stringify({
        // least_loaded: calls alternate between the replicas while both are healthy.
        backend: { name: "vllm", replicas: replicas(), routing: { policy: "least_loaded" } },
        sampling: { temperature: 0 },
      }),
    });
    expect(put.status).toBe(200);
    const cut = await streamedCalls(4, 48);
    await untilInFlight(4);
    await waitFor("two streams open on each replica", async () =>
      (await backends()).every((replica) => replica.in_flight === 2) ? true : undefined,
    );
    await sleep(150); // every stream is generating now

    const begun = await post("/v1/policy/sync/begin", { mode: "interrupt", wait_ms: 1_000 });
    expect(begun.status).toBe(200);
    await sleep(100); // the cut streams' leases settle
    expect(await backends()).toEqual([
      { replica: replicas()[0], healthy: true, in_flight: 0 },
      { replica: replicas()[1], healthy: true, in_flight: 0 },
    ]);
    const { policy_version: before } = (await (await api("/v1/policy")).json()) as {
      policy_version: number;
    };
    expect((await post("/v1/policy/sync/end", { policy_version: before + 1 })).status).toBe(200);

    const resumed = (await Promise.all((await Promise.all(cut)).map(recordedCalls))).flat();
    expect(resumed.map((call) => call.interrupted >= 1)).toEqual([true, true, true, true]);
    expect((await backends()).map((replica) => replica.healthy)).toEqual([true, true]);

    // 16 tokens (0.4 s) each: the six calls overlap, so least_loaded alternates while both are up.
    const later = (
      await Promise.all((await Promise.all(await streamedCalls(6, 16))).map(recordedCalls))
    ).flat();
    const perReplica = replicas().map((url) => later.filter((call) => call.replica === url).length);
    expect(Math.min(...perReplica)).toBeGreaterThanOrEqual(2);
  });
});
