/** Integration: results into the trainer feed, through the real ROLLOUT_RESULTS consumer and by RPC. */
import { objects } from "../../../../src/runtime/objects/object-directory";
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ingestResults } from "../../../../src/runtime/feed/result-ingestion";
import worker from "../../../../functions/worker";
import type { ResultMessage } from "../../../../src/schemas/result-message";
import { waitFor } from "../../../fixtures/rollouts";
import {
  defaultFeed,
  isolatedFeed,
  publishGroup,
  publishHandResult,
} from "../../fixtures/feed-fixtures";

/** Delivers `bodies` to the Worker's results queue handler as one batch; returns what it acked and retried. */
async function deliver(bodies: ResultMessage[]) {
  const batch = createMessageBatch(
    "edge-rollout-results",
    bodies.map((body, i) => ({ id: `msg-${i}`, timestamp: new Date(), attempts: 1, body })),
  );
  await worker.queue(batch as MessageBatch<unknown>, env);
  return getQueueResult(batch, createExecutionContext());
}

afterEach(() => vi.restoreAllMocks());

describe("ingesting results", () => {
  it("keeps one sample when the queue delivers the same message twice", async () => {
    const before = await defaultFeed().stats();
    const { messages, uid } = await publishGroup(1);
    await env.ROLLOUT_RESULTS.send(messages[0]!);
    await env.ROLLOUT_RESULTS.send(messages[0]!);
    const stats = await waitFor("both deliveries", async () => {
      const now = await defaultFeed().stats();
      return now.ingested + now.duplicates - before.ingested - before.duplicates >= 2
        ? now
        : undefined;
    });
    expect(stats.ingested - before.ingested).toBe(1);
    expect(stats.duplicates - before.duplicates).toBe(1);
    const pulled = await defaultFeed().pull({ max_groups: 1024 }, 0);
    const group = pulled.ok ? pulled.groups.find((g) => g.uid === uid) : undefined;
    expect(group?.members.map((m) => m.rollout_id)).toEqual([messages[0]!.rollout_id]);
  });

  it("holds a group until every sample index has arrived, then delivers it whole", async () => {
    const { feed } = isolatedFeed("held");
    const { uid, messages } = await publishGroup(3);
    expect(await feed.ingest(messages[2])).toMatchObject({
      ok: true,
      outcome: "held",
      arrived: 1,
      group_size: 3,
    });
    expect(await feed.ingest(messages[0])).toMatchObject({ ok: true, outcome: "held", arrived: 2 });
    expect(await feed.pull({ max_groups: 10 }, 0)).toMatchObject({
      ok: true,
      lease_id: null,
      groups: [],
    });
    expect((await feed.stats()).pending_groups).toBe(1);
    expect(await feed.ingest(messages[1])).toMatchObject({
      ok: true,
      outcome: "completed",
      arrived: 3,
    });
    const pulled = await feed.pull({ max_groups: 10 }, 0);
    if (!pulled.ok) throw new Error("pull refused");
    expect(pulled.groups).toHaveLength(1);
    expect(pulled.groups[0]).toMatchObject({
      uid,
      training_mode: "verl/hybrid",
      group_size: 3,
      partial: false,
      deliveries: 1,
      policy_version_start: 0,
    });
    expect(pulled.groups[0]!.members.map((m) => m.sample_index)).toEqual([0, 1, 2]);
    expect(pulled.groups[0]!.members[0]).toEqual({
      rollout_id: messages[0]!.rollout_id,
      sample_index: 0,
      status: "succeeded",
      termination_reason: "ENV_DONE",
      reward: 1,
      policy_version_start: 0,
      policy_version_end: 0,
      key: messages[0]!.key,
      samples: 1,
      outcome: "policy",
      member_attempt: 0,
    });
  });

  it("counts failed rollouts towards completion and delivers policy failures with their status", async () => {
    const { feed } = isolatedFeed("failed");
    const uid = "uid-with-failure";
    const ok = await publishHandResult({ uid, sample_index: 0, group_size: 2 });
    // An environment error raised as the policy's fault (PolicyError): a real, penalised outcome.
    const failed = await publishHandResult({
      uid,
      sample_index: 1,
      group_size: 2,
      termination_reason: "ENV_ERROR",
      reward: -1,
      signal: { outcome: "policy" },
    });
    await feed.ingest(ok.message);
    expect(await feed.ingest(failed.message)).toMatchObject({ outcome: "completed" });
    const pulled = await feed.pull({ max_groups: 1 }, 0);
    expect(pulled.ok && pulled.groups[0]!.members.map((m) => [m.status, m.reward])).toEqual([
      ["succeeded", 1],
      ["failed", -1],
    ]);
  });

  it("does not feed results whose data manager is infer, and acks them", async () => {
    const before = await defaultFeed().stats();
    const { messages } = await publishGroup(2, { data_manager: "infer" });
    const result = await deliver(messages);
    expect(result.explicitAcks.sort()).toEqual(["msg-0", "msg-1"]);
    const report = await ingestResults(
      { feed: objects(env).feed(), tracker: () => ({ onResults: async () => [] }) },
      [messages[0]!],
    );
    // Not fed: nothing to confirm to its session.
    expect(report.fed).toEqual([]);
    const after = await defaultFeed().stats();
    expect(after.ingested + after.duplicates + after.late).toBe(
      before.ingested + before.duplicates + before.late,
    );
    expect(after.pending_groups).toBe(before.pending_groups);
  });

  it("retries a result whose data manager or training mode is unknown instead of losing it", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const { messages } = await publishGroup(1);
    const result = await deliver([
      { ...messages[0]!, data_manager: "nope" },
      { ...messages[0]!, rollout_id: `${messages[0]!.rollout_id}-b`, training_mode: "nope" },
    ]);
    expect(result.retryMessages.map((m: { msgId: string }) => m.msgId).sort()).toEqual([
      "msg-0",
      "msg-1",
    ]);
    const report = await ingestResults(
      { feed: objects(env).feed(), tracker: () => ({ onResults: async () => [] }) },
      [{ ...messages[0]!, data_manager: "nope" }],
    );
    expect(report.retry.get(0)).toMatch(
      /unknown data manager "nope"; known data managers: infer, train/,
    );
    expect(report.fed).toEqual([]);
    // Taken by the feed, a duplicate included (it holds it all the same): each confirmed.
    const taken = await ingestResults(
      { feed: objects(env).feed(), tracker: () => ({ onResults: async () => [] }) },
      [messages[0]!, { ...messages[0]!, training_mode: "nope" }, messages[0]!],
    );
    expect({ fed: taken.fed, retried: [...taken.retry.keys()] }).toEqual({
      fed: [0, 2],
      retried: [1],
    });
  });

  it("refuses a member whose group_size disagrees with its group, and counts late arrivals", async () => {
    const { feed } = isolatedFeed("mismatch");
    const { uid, messages } = await publishGroup(2);
    await feed.ingest(messages[0]);
    const other = await publishHandResult({ uid, sample_index: 1, group_size: 3 });
    expect(await feed.ingest(other.message)).toMatchObject({ ok: false, reason: "group_mismatch" });
    const sameIndex = await publishHandResult({ uid, sample_index: 0, group_size: 2 });
    expect(await feed.ingest(sameIndex.message)).toMatchObject({ ok: true, outcome: "late" });
    expect(await feed.ingest({ ...messages[1]!, status: "running" })).toMatchObject({
      ok: false,
      reason: "invalid",
      errors: [{ path: "status" }],
    });
    expect(await feed.ingest({ ...messages[1]!, sample_index: -1 })).toMatchObject({
      ok: false,
      reason: "invalid",
      errors: [{ path: "sample_index" }],
    });
    expect(await feed.stats()).toMatchObject({ ingested: 1, late: 1, pending_groups: 1 });
  });
});
