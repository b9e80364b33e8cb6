/** Integration: a batch re-runs infrastructure failures, judges each group, filters groups without signal and cuts its surplus; a tree batch forks its roots into node groups. */
import { describe, expect, it } from "vitest";
import type { BatchRolloutEntry } from "../../../../src/schemas/batch";
import type { FeedGroup, PullResponse } from "../../../../src/schemas/feed";
import {
  batchRollouts,
  getBatch,
  postBatch,
  waitForBatch,
} from "../../../fixtures/datasets/batch-api";
import { api, getRollout, postRollout, uniqueId, waitFor } from "../../../fixtures/rollouts";
import type { SignalKnobs } from "../../../fixtures/signal-agents";
import "../../../fixtures/signal-agents";
import "../../../fixtures/authoring-agents";
import { expectProblem, postJson } from "../../fixtures/feed-fixtures";

interface GroupViewBody {
  status: { verdict: string | null; reason: string };
  mean: number | null;
  std: number | null;
  members: Array<{
    rollout_id: string | null;
    reward: number | null;
    scored: boolean;
    advantage_grpo: number | null;
    advantage_drgrpo: number | null;
  }>;
}

/** `GET /v1/groups/:uid` (the group view the dashboard's /groups/:uid renders). */
async function groupView(uid: string): Promise<GroupViewBody> {
  const response = await api(`/v1/groups/${uid}`);
  expect(response.status).toBe(200);
  return (await response.json()) as GroupViewBody;
}

function rows(runKey: string, knobs: Array<Omit<SignalKnobs, "run_key">>) {
  return knobs.map((knob, index) => ({
    prompt: `Signal test ${index}.`,
    reward_model: { ground_truth: null },
    extra_info: { index },
    run_key: runKey,
    ...knob,
  }));
}

/** Pulls and acks everything the feed holds or dropped for `batchId`, once the batch is done. */
async function drain(batchId: string): Promise<PullResponse<FeedGroup>> {
  const pulled = (await (
    await postJson("/v1/feed/pull", { max_groups: 100, batch_id: batchId })
  ).json()) as PullResponse<FeedGroup>;
  if (pulled.lease_id) await postJson("/v1/feed/ack", { lease_id: pulled.lease_id });
  return pulled;
}

describe("a batch's groups carry real signal", () => {
  it("re-runs infrastructure failures, delivers the re-run, and withholds a group whose slot kept failing", async () => {
    const batchId = uniqueId("retried");
    const key = uniqueId("k");
    const body = {
      batch_id: batchId,
      agent: "test-signal",
      n: 3,
      rows: rows(key, [
        { fail_runs: { 1: 1 }, rewards: { 0: 1, 1: 0, 2: 1 }, policy_errors: [2] },
        { fail_runs: { 2: 5 } },
      ]),
    };
    expect((await postBatch(body)).status).toBe(202);
    const final = await waitForBatch(batchId, 40_000);
    expect(final).toMatchObject({
      done: true,
      retried: 3,
      counts: { succeeded: 4, failed: 2 },
      groups: { complete: 2, delivered: 1, withheld: 1, target: null },
    });
    const listed: BatchRolloutEntry[] = await batchRollouts(batchId);
    expect(
      listed.filter((entry) => entry.superseded).map((entry) => [entry.rollout_id, entry.outcome]),
    ).toEqual([
      [`${batchId}:0:1`, "infra"],
      [`${batchId}:1:2`, "infra"],
      [`${batchId}:1:2.retry-1`, "infra"],
    ]);
    const rerun = await getRollout(`${batchId}:0:1.retry-1`);
    expect(rerun).toMatchObject({
      outcome: "policy",
      group: { uid: `${batchId}:0`, sample_index: 1, attempt: 1, max_member_retries: 2 },
    });
    expect((await getRollout(`${batchId}:0:1`)).outcome).toBe("infra");
    const pulled = await waitFor("the feed to hold the batch's groups", async () => {
      const page = await drain(batchId);
      return page.groups.length + page.dropped_groups.length === 2 ? page : undefined;
    });
    expect(pulled.groups).toHaveLength(1);
    // The PolicyError is a policy outcome: scored -1 in its group, not withheld.
    expect(
      pulled.groups[0]!.members.map((m) => [m.rollout_id, m.member_attempt, m.outcome, m.reward]),
    ).toEqual([
      [`${batchId}:0:0`, 0, "policy", 1],
      [`${batchId}:0:1.retry-1`, 1, "policy", 0],
      [`${batchId}:0:2`, 0, "policy", -1],
    ]);
    expect(pulled.dropped_groups).toEqual([
      expect.objectContaining({
        uid: `${batchId}:1`,
        reason: "infra_failure",
        failed_members: [
          expect.objectContaining({
            rollout_id: `${batchId}:1:2.retry-2`,
            termination_reason: "ENV_ERROR",
            member_attempt: 2,
          }),
        ],
      }),
    ]);
    // The group view: the delivered group's current runs with verl's GRPO advantages (rewards 1, 0, -1: mean 0, unbiased std 1).
    const delivered = await groupView(`${batchId}:0`);
    expect(delivered.status.verdict).toBe("deliver");
    expect(delivered.members.map((m) => [m.rollout_id, m.reward, m.scored])).toEqual([
      [`${batchId}:0:0`, 1, true],
      [`${batchId}:0:1.retry-1`, 0, true],
      [`${batchId}:0:2`, -1, true],
    ]);
    expect([delivered.mean, delivered.std]).toEqual([0, 1]);
    expect(delivered.members.map((m) => m.advantage_grpo)).toEqual([
      1 / (1 + 1e-6),
      0,
      -1 / (1 + 1e-6),
    ]);
    expect(delivered.members.map((m) => m.advantage_drgrpo)).toEqual([1, 0, -1]);
    const withheld = await groupView(`${batchId}:1`);
    expect(withheld.status).toMatchObject({
      verdict: "infra_failure",
      reason: expect.stringContaining("withheld"),
    });
    expect(withheld.members.every((m) => m.advantage_grpo === null && !m.scored)).toBe(true);
  }, 60_000);

  it("filters groups without signal and cuts the surplus once target_groups groups with signal are complete", async () => {
    const batchId = uniqueId("dapo");
    const key = uniqueId("k");
    const uniform = { rewards: { 0: 1, 1: 1 } };
    const spread = { rewards: { 0: 1, 1: 0 } };
    const body = {
      batch_id: batchId,
      agent: "test-signal",
      n: 2,
      max_concurrent: 2,
      target_groups: 2,
      filter: { metric: "reward" },
      rows: rows(key, [uniform, uniform, spread, spread, spread, spread]),
    };
    expect((await postBatch(body)).status).toBe(202);
    const final = await waitForBatch(batchId, 40_000);
    expect(final).toMatchObject({
      status: "completed",
      groups: { target: 2 },
      counts: { not_released: 0, failed: 0 },
    });
    expect(final.groups.cut_at).not.toBeNull();
    expect(final.groups.delivered).toBeGreaterThanOrEqual(2);
    expect(final.groups.filtered).toBeGreaterThanOrEqual(1);
    // Rows 4 and 5 were the reserve: never all needed, so some of their slots were cut.
    expect(final.counts.succeeded).toBeLessThan(12);
    expect(final.counts.succeeded + final.counts.cancelled).toBe(12);
    const pulled = await waitFor("the feed's verdicts", async () => {
      const page = await drain(batchId);
      return page.groups.length === final.groups.delivered ? page : undefined;
    });
    const uniformRows = [`${batchId}:0`, `${batchId}:1`];
    for (const group of pulled.groups) {
      expect(uniformRows).not.toContain(group.uid);
      expect(new Set(group.members.map((m) => m.reward)).size).toBe(2);
    }
    const filtered = pulled.dropped_groups.filter((g) => g.reason === "no_signal");
    expect(filtered.map((g) => g.uid).every((uid) => uniformRows.includes(uid))).toBe(true);
    expect(filtered.every((g) => g.metric_std === 0)).toBe(true);
    for (const { uid } of filtered)
      expect((await groupView(uid)).status).toMatchObject({
        verdict: "no_signal",
        reason: expect.stringContaining("filtered: no signal"),
      });
  }, 60_000);

  it("cancels the long tail once the target is met, and withholds its groups as cut", async () => {
    const batchId = uniqueId("tail");
    const key = uniqueId("k");
    const series = uniqueId("tail-run");
    const body = {
      batch_id: batchId,
      series,
      agent: "test-signal",
      n: 1,
      max_concurrent: 3,
      target_groups: 2,
      rows: rows(key, [{}, {}, { sleep_ms: { 0: 4_000 } }]),
    };
    expect((await postBatch(body)).status).toBe(202);
    const final = await waitForBatch(batchId, 20_000);
    expect(final).toMatchObject({
      groups: { target: 2, delivered: 2, cut: 1 },
      counts: { succeeded: 2, cancelled: 1 },
    });
    const pulled = await waitFor("the cut group's report", async () => {
      const page = await drain(batchId);
      return page.dropped_groups.length > 0 ? page : undefined;
    });
    expect(pulled.dropped_groups.map((g) => [g.uid, g.reason])).toEqual([[`${batchId}:2`, "cut"]]);
    expect((await getBatch(batchId)).status).toBe("completed");
    // A one-member group: verl's mean 0 and std 1, so its advantage is its reward over 1 + 1e-6.
    const single = await groupView(`${batchId}:0`);
    expect([
      single.mean,
      single.std,
      single.members[0]!.advantage_grpo,
      single.members[0]!.advantage_drgrpo,
    ]).toEqual([0, 1, 1 / (1 + 1e-6), 1]);
    expect((await groupView(`${batchId}:2`)).status).toMatchObject({
      verdict: "cut",
      reason: expect.stringContaining("cut"),
    });
    // The run view finds the batch by its explicit series (the id alone would give "tail-…").
    const run = (await (await api(`/v1/runs/${series}`)).json()) as {
      steps: Array<{
        step: number;
        batch_id: string;
        stats: {
          reward: { count: number; mean: number; std: number };
          groups: { complete: number; no_signal: number };
          policy_version: { min: number };
        };
      }>;
    };
    expect(run.steps).toHaveLength(1);
    expect(run.steps[0]).toMatchObject({
      step: 1,
      batch_id: batchId,
      stats: {
        reward: { count: 2, mean: 1, std: 0 },
        groups: { complete: 3, no_signal: 0 },
        policy_version: { min: 0 },
      },
    });
  }, 30_000);

  it("answers 422 naming the field for a target the rows cannot give, an unknown metric or a non-finite threshold", async () => {
    const base = { agent: "test-signal", n: 2, rows: rows("x", [{}, {}]) };
    const tooMany = await expectProblem(await postBatch({ ...base, target_groups: 3 }), 422);
    expect(tooMany.errors?.map((e) => e.path)).toEqual(["target_groups"]);
    const unknown = await expectProblem(
      await postBatch({ ...base, filter: { metric: "accuracy" } }),
      422,
    );
    expect(unknown.errors?.[0]).toMatchObject({ path: "filter.metric" });
    expect((await postBatch({ ...base, filter: { metric: "acc" } })).status).toBe(202);
    const raw = JSON.stringify({ ...base, filter: { metric: "reward", min_std: 0 } }).replace(
      '"min_std":0',
      '"min_std":1e999',
    );
    const infinite = await expectProblem(
      await api("/v1/batches", { method: "POST", body: raw }),
      422,
    );
    expect(infinite.errors?.[0]).toMatchObject({ path: "filter.min_std" });
    const series = await expectProblem(
      await postBatch({ ...base, series: "a run/with slash" }),
      422,
    );
    expect(series.errors?.[0]).toMatchObject({ path: "series" });
    // The run and group views name the bad path parameter, and 404 what does not exist.
    expect(
      (await expectProblem(await api("/v1/groups/no-row-index"), 400)).errors?.[0],
    ).toMatchObject({ path: "uid" });
    expect((await expectProblem(await api("/v1/groups/x:1.5"), 400)).errors?.[0]).toMatchObject({
      path: "uid",
    });
    expect(
      (await expectProblem(await api("/v1/runs/bad%20series"), 400)).errors?.[0],
    ).toMatchObject({ path: "series" });
    await expectProblem(await api(`/v1/runs/${uniqueId("none")}`), 404);
    await expectProblem(await api(`/v1/groups/${uniqueId("none")}:0`), 404);
  });
});

describe("a tree batch (issue 32)", () => {
  interface InlineGroup {
    uid: string;
    group_size: number;
    members: Array<{
      rollout_id: string;
      sample_index: number;
      member_attempt: number;
      samples: Array<{
        extra_fields: {
          tree?: { root: string; parent: string; branch_step: number; path: string[] };
        };
      }>;
    }>;
  }

  /** Pulls (inline) and acks the batch's groups until `count` came; returns them by uid. */
  async function pullGroups(batchId: string, count: number): Promise<Map<string, InlineGroup>> {
    const seen = new Map<string, InlineGroup>();
    await waitFor(`${count} groups of ${batchId} in the feed`, async () => {
      const page = (await (
        await postJson("/v1/feed/pull", { max_groups: 100, batch_id: batchId, inline: true })
      ).json()) as { lease_id: string | null; groups: InlineGroup[] };
      if (page.lease_id) await postJson("/v1/feed/ack", { lease_id: page.lease_id });
      for (const group of page.groups) seen.set(group.uid, group);
      return seen.size >= count ? true : undefined;
    });
    return seen;
  }

  function treeRows(
    runKey: string,
    count: number,
    failAt: { step: number; skip: number } | null = null,
  ) {
    return Array.from({ length: count }, (_, index) => ({
      prompt: `Tree test ${index}.`,
      reward_model: { ground_truth: null },
      extra_info: { index },
      run_key: runKey,
      fail_at: index === 0 ? failAt : null,
    }));
  }

  it("forks each root at step 1 into 2 children in one group per node, re-runs a child that failed for infrastructure, and fills the feed", async () => {
    const batchId = uniqueId("tree1");
    const body = {
      batch_id: batchId,
      agent: "test-tree-signal",
      n: 1,
      config: { max_steps: 3 },
      tree: { branch_at: [1], width: 2 },
      rows: treeRows(uniqueId("k"), 2, { step: 1, skip: 1 }),
    };
    expect((await postBatch(body)).status).toBe(202);
    const final = await waitForBatch(batchId, 40_000);
    expect(final).toMatchObject({
      done: true,
      rollouts: 6,
      released: 6,
      retried: 1,
      counts: { succeeded: 6, not_released: 0 },
      groups: { complete: 4, delivered: 4 },
    });
    const listed = await batchRollouts(batchId);
    expect(
      listed
        .filter((entry) => entry.rollout_id.startsWith(`${batchId}:1:0.t1-`))
        .map((entry) => entry.uid),
    ).toEqual([`${batchId}:1:0.t1`, `${batchId}:1:0.t1`]);
    const retried = listed.filter((entry) => entry.superseded).map((entry) => entry.rollout_id);
    expect(retried).toHaveLength(1);
    expect([`${batchId}:0:0.t1-0`, `${batchId}:0:0.t1-1`]).toContain(retried[0]);
    const groups = await pullGroups(batchId, 4);
    expect([...groups.keys()].sort()).toEqual(
      [`${batchId}:0`, `${batchId}:0:0.t1`, `${batchId}:1`, `${batchId}:1:0.t1`].sort(),
    );
    for (const row of [0, 1]) {
      const root = `${batchId}:${row}:0`;
      expect(groups.get(`${batchId}:${row}`)!.members.map((m) => m.rollout_id)).toEqual([root]);
      const node = groups.get(`${root}.t1`)!;
      expect(node.group_size).toBe(2);
      expect(node.members.map((m) => m.sample_index).sort()).toEqual([0, 1]);
      for (const member of node.members) {
        expect(member.rollout_id).toMatch(
          new RegExp(`^${root.replace(/[.:]/g, "\\$&")}\\.t1-${member.sample_index}(\\.retry-1)?$`),
        );
        expect(member.samples.length).toBeGreaterThan(0);
        expect(member.samples[0]!.extra_fields.tree).toMatchObject({
          root,
          parent: root,
          branch_step: 1,
          path: [root, member.rollout_id],
        });
      }
    }
    // A tree node's group is the batch's: no caller adds a member to it.
    const intruder = await postRollout({
      agent: "external",
      task: { problem: "p" },
      group: { uid: `${batchId}:0:0.t1`, sample_index: 0, group_size: 5 },
    });
    expect((await expectProblem(intruder, 409)).errors?.map((e) => e.path)).toEqual(["group.uid"]);
    // The re-run is a fresh fork of the root into the same slot, attempt 1.
    const rerun = await getRollout(`${retried[0]}.retry-1`);
    expect(rerun).toMatchObject({
      status: "succeeded",
      group: { uid: `${batchId}:0:0.t1`, attempt: 1, group_size: 2 },
      tree: { parent: `${batchId}:0:0`, branch_step: 1 },
    });
  }, 60_000);

  it("forks again at the second branch step: a row's tree is one group per node, grandchildren carrying the whole path", async () => {
    const batchId = uniqueId("tree2");
    const body = {
      batch_id: batchId,
      agent: "test-tree-signal",
      n: 1,
      config: { max_steps: 3 },
      tree: { branch_at: [1, 2], width: 2 },
      rows: treeRows(uniqueId("k"), 1),
    };
    expect((await postBatch(body)).status).toBe(202);
    expect(await waitForBatch(batchId, 40_000)).toMatchObject({
      done: true,
      rollouts: 7,
      counts: { succeeded: 7 },
      groups: { complete: 4, delivered: 4 },
    });
    const root = `${batchId}:0:0`;
    const groups = await pullGroups(batchId, 4);
    expect([...groups.keys()].sort()).toEqual(
      [`${batchId}:0`, `${root}.t1`, `${root}.t1-0.t2`, `${root}.t1-1.t2`].sort(),
    );
    const leaf = groups.get(`${root}.t1-1.t2`)!.members.find((m) => m.sample_index === 0)!;
    expect(leaf.rollout_id).toBe(`${root}.t1-1.t2-0`);
    expect(leaf.samples[0]!.extra_fields.tree).toMatchObject({
      root,
      parent: `${root}.t1-1`,
      branch_step: 2,
      path: [root, `${root}.t1-1`, leaf.rollout_id],
    });
  }, 60_000);

  it("answers 422 naming the field for a tree that cannot run", async () => {
    const base = {
      agent: "test-tree-signal",
      n: 1,
      config: { max_steps: 3 },
      rows: treeRows("x", 1),
    };
    const paths = async (body: unknown) =>
      (await expectProblem(await postBatch(body), 422)).errors?.map((e) => e.path);
    expect(await paths({ ...base, tree: { branch_at: [2, 1], width: 2 } })).toEqual([
      "tree.branch_at.1",
    ]);
    expect(await paths({ ...base, tree: { branch_at: [1], width: 65 } })).toEqual(["tree.width"]);
    expect(await paths({ ...base, tree: { branch_at: [3], width: 2 } })).toEqual([
      "tree.branch_at.0",
    ]);
    expect(
      await paths({ ...base, agent: "authoring-fn-math", tree: { branch_at: [1], width: 2 } }),
    ).toEqual(["tree"]);
  });
});
