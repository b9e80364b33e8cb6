/** Integration: a group reaches the trainer only with real signal (infrastructure failures, retries, filters, cuts). */
import { describe, expect, it } from "vitest";
import { uniqueId } from "../../../fixtures/rollouts";
import { isolatedFeed, publishHandResult, type HandResult } from "../../fixtures/feed-fixtures";

type Member = Omit<HandResult, "uid" | "group_size" | "batch_id">;

/** Publishes members of one batch group of `size` and returns their messages, in the order given. */
async function groupOf(size: number, members: Member[]) {
  const uid = uniqueId("uid");
  const batchId = uniqueId("batch");
  const published = await Promise.all(
    members.map((member) =>
      publishHandResult({ ...member, uid, group_size: size, batch_id: batchId }),
    ),
  );
  return { uid, batchId, messages: published.map((p) => p.message) };
}

describe("a group's signal in the trainer feed", () => {
  it("withholds a complete group whose member failed for infrastructure and reports it like a stale drop", async () => {
    const { feed } = isolatedFeed("infra");
    const { uid, batchId, messages } = await groupOf(3, [
      { sample_index: 0 },
      { sample_index: 1 },
      { sample_index: 2, termination_reason: "MODEL_ERROR" },
    ]);
    for (const message of messages.slice(0, 2))
      expect(await feed.ingest(message)).toMatchObject({ outcome: "held" });
    expect(await feed.ingest(messages[2])).toMatchObject({
      outcome: "withheld",
      reason: "infra_failure",
    });
    const pulled = await feed.pull({ max_groups: 10, batch_id: batchId }, 0);
    if (!pulled.ok) throw new Error("pull refused");
    expect(pulled.groups).toEqual([]);
    expect(pulled.dropped_groups).toHaveLength(1);
    expect(pulled.dropped_groups[0]).toMatchObject({
      uid,
      reason: "infra_failure",
      arrived: 3,
      failed_members: [
        {
          rollout_id: messages[2]!.rollout_id,
          sample_index: 2,
          termination_reason: "MODEL_ERROR",
          outcome: "infra",
          member_attempt: 0,
        },
      ],
    });
    const stats = await feed.stats({ batch_id: batchId });
    expect(stats.dropped_infra_failure).toBe(1);
    expect(stats.by_batch[batchId]).toMatchObject({
      dropped_groups: 1,
      dropped_by_reason: { infra_failure: 1 },
    });
  });

  it("never makes a re-run slot's first result a member: its replacement completes the group, in either order", async () => {
    const { feed } = isolatedFeed("retry");
    const { batchId, messages } = await groupOf(2, [
      { sample_index: 0 },
      { sample_index: 1, termination_reason: "MODEL_ERROR", signal: { superseded: true } },
      { sample_index: 1, signal: { member_attempt: 1 } },
    ]);
    const [first, original, replacement] = messages;
    await feed.ingest(first);
    expect(await feed.ingest(replacement)).toMatchObject({ outcome: "completed" });
    expect(await feed.ingest(original)).toMatchObject({ outcome: "superseded" });
    expect(await feed.ingest(original)).toMatchObject({ outcome: "duplicate" });
    // Remembered: the original's delivery check stops re-publishing it.
    expect(await feed.holds(original!.rollout_id)).toBe(true);
    const pulled = await feed.pull({ max_groups: 10, batch_id: batchId }, 0);
    if (!pulled.ok) throw new Error("pull refused");
    expect(pulled.groups[0]!.members.map((m) => [m.rollout_id, m.member_attempt])).toEqual([
      [first!.rollout_id, 0],
      [replacement!.rollout_id, 1],
    ]);
    expect(pulled.groups[0]!.valid_members).toBeUndefined();
    expect((await feed.stats()).retried).toBe(1);
  });

  it("delivers the valid members of a group that opted in, flagged, and withholds it when fewer than 2 are valid", async () => {
    const { feed } = isolatedFeed("valid");
    const opt = { on_infra_failure: "deliver_valid" as const };
    const kept = await groupOf(3, [
      { sample_index: 0, signal: opt },
      { sample_index: 1, reward: 0, signal: opt },
      { sample_index: 2, termination_reason: "ENV_ERROR", signal: opt },
    ]);
    for (const message of kept.messages) await feed.ingest(message);
    const lone = await groupOf(2, [
      { sample_index: 0, signal: opt },
      { sample_index: 1, termination_reason: "AGENT_ERROR", signal: opt },
    ]);
    await feed.ingest(lone.messages[0]);
    expect(await feed.ingest(lone.messages[1])).toMatchObject({
      outcome: "withheld",
      reason: "infra_failure",
    });
    const pulled = await feed.pull({ max_groups: 10, batch_id: [kept.batchId, lone.batchId] }, 0);
    if (!pulled.ok) throw new Error("pull refused");
    expect(pulled.groups.map((g) => [g.uid, g.partial, g.valid_members])).toEqual([
      [kept.uid, true, [0, 1]],
    ]);
    expect(pulled.dropped_groups.map((g) => g.uid)).toEqual([lone.uid]);
    expect((await feed.stats()).delivered_partial).toBe(1);
  });

  it("filters groups without signal on the batch's metric and keeps those with spread", async () => {
    const { feed } = isolatedFeed("filter");
    const filter = { signal_filter: { metric: "acc", min_std: 0 } };
    const uniform = await groupOf(2, [
      { sample_index: 0, signal: { ...filter, metric: 1 } },
      { sample_index: 1, reward: 0.2, signal: { ...filter, metric: 1 } },
    ]);
    const spread = await groupOf(2, [
      { sample_index: 0, signal: { ...filter, metric: 1 } },
      { sample_index: 1, signal: { ...filter, metric: 0 } },
    ]);
    for (const message of [...uniform.messages, ...spread.messages]) await feed.ingest(message);
    const pulled = await feed.pull(
      { max_groups: 10, batch_id: [uniform.batchId, spread.batchId] },
      0,
    );
    if (!pulled.ok) throw new Error("pull refused");
    expect(pulled.groups.map((g) => g.uid)).toEqual([spread.uid]);
    expect(pulled.dropped_groups).toEqual([
      expect.objectContaining({
        uid: uniform.uid,
        reason: "no_signal",
        metric: "acc",
        metric_std: 0,
      }),
    ]);
    expect((await feed.stats()).dropped_no_signal).toBe(1);
  });

  it("withholds a group with a cancelled member as cut", async () => {
    const { feed } = isolatedFeed("cut");
    const { uid, batchId, messages } = await groupOf(2, [
      { sample_index: 0 },
      { sample_index: 1, termination_reason: "CANCELLED" },
    ]);
    for (const message of messages) await feed.ingest(message);
    const pulled = await feed.pull({ max_groups: 10, batch_id: batchId }, 0);
    expect(pulled.ok && pulled.dropped_groups.map((g) => [g.uid, g.reason])).toEqual([
      [uid, "cut"],
    ]);
    expect((await feed.stats()).dropped_cut).toBe(1);
  });
});
