import { describe, expect, it } from "vitest";
import { openaiFor } from "../../../fixtures/external-rollouts";
import { api, getRollout, waitFor, waitForEnd } from "../../../fixtures/rollouts";
import {
  claim,
  externalBatch,
  heartbeat,
  postJson,
  uniqueAgent,
} from "../../../fixtures/runner-claims";
import type { BatchRunners } from "../../../../src/schemas/batch-runners";
import type { ClaimedRollout } from "../../../../src/schemas/runner-claims";
import { admissionShardOf } from "../../../../src/runtime/object-names";
import { env } from "cloudflare:workers";
import { policy, readPolicyState, restorePolicyState } from "../../fixtures/policy-fixtures";

const ask = (base: string, key: string) =>
  openaiFor(base, key).chat.completions.create({
    model: "any",
    messages: [{ role: "user", content: "What is 2 + 2?" }],
  });

describe("runner claims (integration)", () => {
  it("hands each batch rollout to exactly one of many concurrent claims, with its task and attempt-bound llm", async () => {
    const agent = uniqueAgent("calc");
    await externalBatch(agent, 3, 2);
    const rounds = await Promise.all(
      Array.from({ length: 5 }, (_, i) => claim(`runner-${i}`, agent, { max: 3 })),
    );
    const claimed = rounds.flat();
    expect(claimed).toHaveLength(6);
    expect(new Set(claimed.map((c) => c.rollout_id)).size).toBe(6);
    expect(
      claimed.every(
        (c) =>
          c.attempt === 1 &&
          c.llm.base_url.endsWith(`/v1/rollouts/${c.rollout_id}/attempts/1/llm/v1`) &&
          c.llm.endpoint === c.llm.base_url,
      ),
    ).toBe(true);
    expect(claimed[0]!.task.problem).toMatch(/What is \d \+ 1\?/);
    expect(await claim("late-runner", agent, { max: 3 })).toEqual([]);
  });

  it("records the attempt's calls, ends the rollout with that attempt's outcome, and answers a retried finish", async () => {
    const agent = uniqueAgent("fin");
    await externalBatch(agent, 1, 1);
    const [claimed] = await claim("runner-a", agent);
    expect((await getRollout(claimed!.rollout_id)).runner_lease).toMatchObject({
      runner_id: "runner-a",
      attempt: 1,
    });
    await ask(claimed!.llm.base_url, claimed!.llm.api_key);
    await postJson(`/v1/rollouts/${claimed!.rollout_id}/events`, {
      events: [{ kind: "reward", value: 0.5, attributes: { attempt: 1 } }],
    });
    const finish = await postJson(`/v1/rollouts/${claimed!.rollout_id}/attempts/1/finish`, {
      runner_id: "runner-a",
    });
    expect(finish.status).toBe(200);
    const view = await getRollout(claimed!.rollout_id);
    expect(view).toMatchObject({
      status: "succeeded",
      reward: 0.5,
      attempts: 1,
      final_attempt: 1,
      runner_lease: null,
    });
    expect(view.llm_calls.map((call) => [call.attempt, call.excluded_from_training])).toEqual([
      [1, false],
    ]);
    expect(
      (
        await postJson(`/v1/rollouts/${claimed!.rollout_id}/attempts/1/finish`, {
          runner_id: "runner-a",
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await postJson(`/v1/rollouts/${claimed!.rollout_id}/attempts/2/finish`, {
          runner_id: "runner-a",
        })
      ).status,
    ).toBe(409);
  });

  it("offers a rollout again as a new attempt when its runner stops heartbeating, excluding the lost attempt's calls", async () => {
    const agent = uniqueAgent("lost");
    const batchId = await externalBatch(agent, 1, 1);
    const [first] = await claim("doomed", agent, { lease_ms: 2_000 });
    await ask(first!.llm.base_url, first!.llm.api_key);
    const [second] = await waitFor("the lost rollout to be offered again", async () => {
      const got = await claim("survivor", agent, { lease_ms: 10_000 });
      return got.length > 0 ? got : undefined;
    });
    expect(second).toMatchObject({ rollout_id: first!.rollout_id, attempt: 2 });
    const stale = await api(
      `/v1/rollouts/${first!.rollout_id}/attempts/1/llm/v1/chat/completions`,
      {
        method: "POST",
        headers: { authorization: `Bearer ${first!.llm.api_key}` },
        body: JSON.stringify({ model: "any", messages: [{ role: "user", content: "hi" }] }),
      },
    );
    expect(stale.status).toBe(409);
    await ask(second!.llm.base_url, second!.llm.api_key);
    // As a runner does while it works: the batch learns of its claim from the heartbeat.
    await heartbeat("survivor", [{ rollout_id: first!.rollout_id, attempt: 2 }], 10_000);
    await postJson(`/v1/rollouts/${first!.rollout_id}/attempts/2/finish`, {
      runner_id: "survivor",
      reward: 1,
    });
    const view = await getRollout(first!.rollout_id);
    expect(view.llm_calls.map((call) => [call.attempt, call.excluded_from_training])).toEqual([
      [1, true],
      [2, false],
    ]);
    expect(view.spans.find((span) => span.name === "attempt_lost")?.attributes).toMatchObject({
      attempt: 1,
      runner_id: "doomed",
    });
    // The finish reaches the batch with the rollout's result message (the consumer's batched onResults).
    const batch = await waitFor("the survivor's finish counted by the batch", async () => {
      const read = (await (await api(`/v1/batches/${batchId}`)).json()) as {
        runners: BatchRunners;
      };
      return read.runners.runners.some((r) => r.runner_id === "survivor" && r.finished === 1)
        ? read
        : undefined;
    });
    const byId = Object.fromEntries(
      batch.runners.runners.map((runner) => [runner.runner_id, runner]),
    );
    expect(byId.doomed).toMatchObject({ status: "lost", claimed: 1, lost: 1, active: 0 });
    expect(byId.survivor).toMatchObject({ status: "heartbeating", claimed: 1, finished: 1 });
    expect(batch.runners.lost_attempts).toBe(1);
  });

  it("ends the rollout TIMEOUT when the runner of its last attempt is lost", async () => {
    const agent = uniqueAgent("max");
    await externalBatch(agent, 1, 1, { max_attempts: 1 });
    const [claimed] = await claim("doomed", agent, { lease_ms: 2_000 });
    const view = await waitForEnd(claimed!.rollout_id, 15_000);
    expect(view).toMatchObject({ status: "failed", termination_reason: "TIMEOUT", attempts: 1 });
    expect(view.error).toMatch(/max_attempts/);
  });

  it("keeps the lease while heartbeats arrive, and tells a runner whose attempt is not its own to stop", async () => {
    const agent = uniqueAgent("beat");
    await externalBatch(agent, 1, 1);
    // Beats every quarter lease for 1.25 leases: the lease outlives its first term only through
    // them, and a heartbeat may take up to three quarters of a lease on a loaded machine.
    const leaseMs = 3_000;
    const [claimed] = await claim("steady", agent, { lease_ms: leaseMs });
    const held = [{ rollout_id: claimed!.rollout_id, attempt: 1 }];
    for (let beat = 0; beat < 5; beat++) {
      expect((await heartbeat("steady", held))[0]).toMatchObject({ ok: true });
      await new Promise((resolve) => setTimeout(resolve, leaseMs / 4));
    }
    expect(await claim("thief", agent)).toEqual([]);
    expect((await heartbeat("thief", held))[0]).toMatchObject({ ok: false, reason: "lost" });
  });

  it("offers a handed-back attempt again without using up max_attempts; a crash uses it", async () => {
    const agent = uniqueAgent("back");
    await externalBatch(agent, 1, 1, { max_attempts: 1 });
    const [first] = await claim("leaving", agent);
    const released = await postJson(`/v1/rollouts/${first!.rollout_id}/attempts/1/release`, {
      runner_id: "leaving",
      reason: "shutdown",
    });
    expect(await released.json()).toMatchObject({ status: "queued" });
    const [second] = await claim("next", agent);
    expect(second).toMatchObject({ rollout_id: first!.rollout_id, attempt: 2 });
    await postJson(`/v1/rollouts/${first!.rollout_id}/attempts/2/release`, {
      runner_id: "next",
      reason: "crashed",
      error: "boom",
    });
    expect(await getRollout(first!.rollout_id)).toMatchObject({
      status: "failed",
      termination_reason: "AGENT_ERROR",
    });
  });

  it("offers a single rollout of external:<agent> to runners, but not one of plain external", async () => {
    const agent = uniqueAgent("single");
    const created = await postJson("/v1/rollouts", {
      agent: `external:${agent}`,
      task: { problem: "solo" },
    });
    expect(await created.json()).toMatchObject({ status: "queued" });
    const [claimed] = await claim("r", agent);
    expect(claimed).toMatchObject({ agent, attempt: 1, task: { problem: "solo" } });
    const plain = await postJson("/v1/rollouts", {
      agent: "external",
      task: { problem: "by hand" },
    });
    expect(await plain.json()).toMatchObject({ status: "running" });
    expect(await claim("r", "external")).toEqual([]);
  });

  it("rejects a claim with bad fields, naming them", async () => {
    const response = await postJson("/v1/runners/claim", {
      runner_id: "r",
      agents: [],
      max: 100,
      lease_ms: 10,
    });
    expect(response.status).toBe(422);
    const paths = ((await response.json()) as { errors: Array<{ path: string }> }).errors.map(
      (error) => error.path,
    );
    expect(paths).toEqual(expect.arrayContaining(["agents", "max", "lease_ms"]));
  });

  it("answers a claim with the policy's model from the rollout's admission shard, asking the policy object nothing", async () => {
    const saved = await readPolicyState();
    try {
      const update = await api("/v1/policy", {
        method: "PUT",
        body: JSON.stringify({ model: "policy-for-runners" }),
      });
      expect(update.status).toBe(200);
      const agent = uniqueAgent("model");
      await externalBatch(agent, 1, 1);
      const before = (await policy().requestCounts()).by_method;
      const [claimed] = await claim("runner-m", agent);
      const after = (await policy().requestCounts()).by_method;
      expect(claimed!.llm.model).toBe("policy-for-runners");
      // pressureShare: a batch tracker's alarm (every 5 s, per batch, never per claim) may land here.
      const asked = Object.keys(after).filter(
        (method) =>
          !["requestCounts", "pressureShare"].includes(method) && after[method] !== before[method],
      );
      expect(asked).toEqual([]);
    } finally {
      await restorePolicyState(saved);
    }
  });

  it("answers a claim's resources with the latest version, each version read from the policy object once per shard", async () => {
    const name = uniqueAgent("res").replace(/[^a-z0-9_]/gi, "_");
    const put = (value: string) =>
      api(`/v1/resources/${name}`, { method: "PUT", body: JSON.stringify(value) });
    const agent = uniqueAgent("res");
    await externalBatch(agent, 21, 1);
    const claimOne = async () => {
      const response = await postJson("/v1/runners/claim", {
        runner_id: "runner-res",
        agents: [agent],
        resources: [name],
      });
      return ((await response.json()) as { claimed: ClaimedRollout[] }).claimed[0]!;
    };
    expect((await put("first")).status).toBe(201);
    const reads = async () => (await policy().requestCounts()).by_method.getResource ?? 0;
    const before = await reads();
    const claims: ClaimedRollout[] = [];
    // More claims than the 16 shards: some shard answers twice, from what it read once.
    for (let i = 0; i < 20; i++) claims.push(await claimOne());
    const shards = new Set(claims.map((c) => admissionShardOf(c.rollout_id, env.ADMISSION_SHARDS)));
    const firstReads = (await reads()) - before;
    expect((await put("second")).status).toBe(201);
    const last = await claimOne();
    expect(claims.every((c) => c.resources[name] === "first")).toBe(true);
    expect(last.resources[name]).toBe("second");
    expect(firstReads).toBeGreaterThanOrEqual(1);
    expect(firstReads).toBeLessThanOrEqual(shards.size);
    expect(shards.size).toBeLessThan(claims.length);
  });

  it("counts each attempt once, claimed from heartbeats and finished from results, with no request per claim or finish", async () => {
    const agent = uniqueAgent("count");
    const batchId = await externalBatch(agent, 3, 1);
    const claimed = await claim("r-count", agent, { max: 3, lease_ms: 10_000 });
    expect(claimed).toHaveLength(3);
    const held = claimed.map((c) => ({ rollout_id: c.rollout_id, attempt: c.attempt }));
    await heartbeat("r-count", held, 10_000);
    await heartbeat("r-count", held, 10_000);
    for (const c of claimed)
      await postJson(`/v1/rollouts/${c.rollout_id}/attempts/${c.attempt}/finish`, {
        runner_id: "r-count",
        reward: 1,
      });
    const runner = await waitFor("three finishes counted", async () => {
      const read = (await (await api(`/v1/batches/${batchId}`)).json()) as {
        runners: BatchRunners;
      };
      const found = read.runners.runners.find((r) => r.runner_id === "r-count");
      return found?.finished === 3 ? found : undefined;
    });
    expect(runner).toMatchObject({ claimed: 3, finished: 3, active: 0, status: "heartbeating" });
    const counts = (await (await api(`/v1/batches/${batchId}/requests`)).json()) as {
      by_method: Record<string, number>;
    };
    expect(counts.by_method.runnerEvent ?? 0).toBe(0);
    expect(counts.by_method.runnerSeen).toBe(2);
  });
});
