/**
 * Integration: what a rollout costs in Durable Object units, counted by the session object
 * itself (requests served; SQLite rows from its own cursors, the units Cloudflare bills): the
 * rows one committed step writes, tables created only when needed, and the
 * `GET /v1/rollouts/:id/usage` route that reports it.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  countRows,
  createByHand,
  fakeCommit,
  readState,
  sessionOf,
} from "../../../fixtures/hand-session";
import { EXTERNAL_AGENT, RolloutSpec } from "../../../../src/schemas/rollout-api";
import { api, runRollout, uniqueId, waitFor } from "../../../fixtures/rollouts";
import type { RolloutView } from "../../../../src/schemas/rollout-api";
import "../../../fixtures/authoring-agents";
import "../../../fixtures/test-agents";

const math = { problem: "What is 12 + 30?", ground_truth: "42" };

function tablesOf(rolloutId: string): Promise<string[]> {
  const stub = env.ROLLOUT_SESSION.get(env.ROLLOUT_SESSION.idFromName(rolloutId));
  return runInDurableObject(stub, (_instance, state) =>
    state.storage.sql
      .exec<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
      .toArray()
      .map((row) => row.name),
  );
}

/** A hand-made session, leased, with its first step committed. */
async function sessionWithOneStep(rolloutId: string) {
  const session = await createByHand(rolloutId);
  const leased = await session.lease("driver-a");
  if (!leased.ok) throw new Error(`lease refused: ${leased.reason}`);
  await session.commitStep(leased.lease.lease_id, fakeCommit(rolloutId, 0));
  return { session, leaseId: leased.lease.lease_id };
}

describe("a session's SQLite cost", () => {
  it("writes 2 rows per committed step with one call: the step with the state it leaves, and the call (no index entries)", async () => {
    const rolloutId = uniqueId("cost-step");
    const { session, leaseId } = await sessionWithOneStep(rolloutId);
    const before = (await session.usageCounts())!;
    const committed = await session.commitStep(leaseId, fakeCommit(rolloutId, 1));
    expect(committed).toMatchObject({ ok: true, duplicate: false });
    const after = (await session.usageCounts())!;
    expect(after.sqlite.rows_written - before.sqlite.rows_written).toBe(2);
    // One request, counted by its method; reading the counts is not counted.
    expect(after.requests.total - before.requests.total).toBe(1);
    expect(after.requests.by_method.commitStep! - before.requests.by_method.commitStep!).toBe(1);
    // A duplicate commit is answered from what is stored and writes nothing.
    await session.commitStep(leaseId, fakeCommit(rolloutId, 1));
    expect((await session.usageCounts())!.sqlite.rows_written).toBe(after.sqlite.rows_written);
  });

  it("creates a new session in 6 statements: one look at its tables, their creation, the spec and the state, and no read of what it is writing", async () => {
    const rolloutId = uniqueId("cost-create");
    const session = sessionOf(rolloutId);
    const created = await session.create(
      RolloutSpec.parse({
        rollout_id: rolloutId,
        kind: "external",
        agent: EXTERNAL_AGENT,
        task: { problem: "Say hello.", task_id: rolloutId, agent_name: EXTERNAL_AGENT },
        config: {},
        created_at: Date.now(),
      }),
    );
    expect(created).toMatchObject({ ok: true, created: true });
    const counts = (await session.usageCounts())!;
    // sqlite_master once; meta, steps and llm_calls created; spec and state written. Before: a
    // CREATE IF NOT EXISTS and a PRAGMA for every table, and the spec and state each read from
    // storage (twice) before they were first written.
    expect(counts.sqlite.statements).toBe(6);
    expect(counts.sqlite.rows_written).toBeGreaterThan(0);
    // A request after it reads the state and spec the object keeps, not storage.
    expect(await session.renewLease("no-such-lease")).toMatchObject({ reason: "stale_lease" });
    expect((await session.usageCounts())!.sqlite.statements).toBe(6);
  });

  it("keeps no index on a session's tables, and a call recorded twice is stored and counted once", async () => {
    const rolloutId = uniqueId("cost-dup-call");
    const { session, leaseId } = await sessionWithOneStep(rolloutId);
    const stub = env.ROLLOUT_SESSION.get(env.ROLLOUT_SESSION.idFromName(rolloutId));
    const indexes = await runInDurableObject(stub, (_instance, state) =>
      state.storage.sql
        .exec<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'index'`)
        .toArray()
        .map((row) => row.name),
    );
    expect(indexes).toEqual([]);

    // The gateway records the next step's call first (a retried record, twice), then the driver commits the step with it.
    const commit = fakeCommit(rolloutId, 1);
    const call = commit.llm_calls[0]!;
    expect(await session.recordCall(call)).toEqual({ ok: true });
    const once = (await session.usageCounts())!.sqlite.rows_written;
    expect(await session.recordCall(call)).toEqual({ ok: true });
    expect(await session.commitStep(leaseId, commit)).toMatchObject({ ok: true, duplicate: false });
    expect(await countRows(rolloutId, "llm_calls")).toBe(2);
    const state = await readState(rolloutId);
    expect(state.llm_calls).toBe(2);
    expect(state.prompt_tokens).toBe(6);
    expect(state.completion_tokens).toBe(4);
    // The repeated record wrote only the state (its activity time); the commit, the step with its state.
    expect((await session.usageCounts())!.sqlite.rows_written - once).toBe(2);
  });

  it("creates the spans and value-parts tables only for a rollout that writes one", async () => {
    const plain = uniqueId("cost-plain");
    await sessionWithOneStep(plain);
    const tables = await tablesOf(plain);
    expect(tables).toEqual(expect.arrayContaining(["llm_calls", "meta", "steps"]));
    expect(tables).not.toContain("spans");
    expect(tables).not.toContain("value_parts");
    expect(tables).not.toContain("sqlite_sequence");
    // Reading the rollout (with its spans) works without the tables.
    const view = await api(`/v1/rollouts/${plain}`);
    expect(view.status).toBe(200);
    expect(((await view.json()) as { spans: unknown[] }).spans).toEqual([]);

    // In val mode the lit agent emits its reward as a span: its session has the table, and the span reads back.
    const lit = await runRollout({
      agent: "authoring-lit",
      rollout_id: uniqueId("cost-lit"),
      task: math,
      config: { mode: "val" },
    });
    expect(lit.spans.some((span) => span.kind === "reward")).toBe(true);
    expect(await tablesOf(lit.rollout_id)).toContain("spans");
  });

  it("reports a rollout's requests and SQLite counts over HTTP, and 404 for a rollout that does not exist", async () => {
    const view = await runRollout({
      agent: "dialogue",
      rollout_id: uniqueId("cost-route"),
      task: { problem: "Tell me about topic 1.", extra_args: { turns: 3 } },
      config: { max_steps: 3 },
    });
    expect(view.trajectory.steps).toHaveLength(3);
    // Published by the alarm that drove it, once the drive returned.
    await waitFor("the rollout's publication", async () => {
      const current = (await (await api(`/v1/rollouts/${view.rollout_id}`)).json()) as RolloutView;
      return current.publication.status === "published" ? current : undefined;
    });
    const response = await api(`/v1/rollouts/${view.rollout_id}/usage`);
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      rollout_id: string;
      requests: { total: number; by_method: Record<string, number> };
      sqlite: { statements: number; rows_read: number; rows_written: number };
    };
    expect(body.rollout_id).toBe(view.rollout_id);
    // A stepwise rollout: created, leased, committed once per step, finished, and woken by one
    // alarm, which drove it and then published it (no second alarm for the publication).
    expect(body.requests.by_method).toMatchObject({
      create: 1,
      lease: 1,
      commitStep: view.trajectory.steps.length,
      finish: 1,
      alarm: 1,
    });
    // Nor is an alarm left set for later: the object is not woken again.
    const stub = env.ROLLOUT_SESSION.get(env.ROLLOUT_SESSION.idFromName(view.rollout_id));
    expect(
      await runInDurableObject(stub, (_instance, state) => state.storage.getAlarm()),
    ).toBeNull();
    expect(body.requests.total).toBe(
      Object.values(body.requests.by_method).reduce((sum, n) => sum + n, 0),
    );
    expect(body.sqlite.statements).toBeGreaterThan(0);
    expect(body.sqlite.rows_written).toBeGreaterThan(0);
    const missing = await api(`/v1/rollouts/${uniqueId("never-created")}/usage`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toContain("application/problem+json");
  });
});
