/**
 * Integration: a step's commit stores the session state in the step's own row (one row written
 * for both), on a real workerd Durable Object. After a restart the state read back is the one the
 * last write left, whether that was a commit (the step row) or anything else (the `meta` row);
 * an object whose steps table predates the column gets it on start and keeps its state.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createByHand, fakeCommit, readState, sessionOf } from "../../../fixtures/hand-session";
import { uniqueId, waitFor } from "../../../fixtures/rollouts";
import "../../../fixtures/test-agents";

function objectOf(rolloutId: string): DurableObjectStub {
  return env.ROLLOUT_SESSION.get(env.ROLLOUT_SESSION.idFromName(rolloutId));
}

/** Restarts the object: its memory is gone, its SQLite stays (as after an eviction or a deploy). */
async function restart(rolloutId: string): Promise<void> {
  await runInDurableObject(objectOf(rolloutId), (_instance, state) =>
    state.abort("test restart"),
  ).catch(() => undefined);
}

/** The revision stored in the `meta` row, and in the latest step row (null without one). */
function storedRevisions(rolloutId: string): Promise<{ meta: number; step: number | null }> {
  return runInDurableObject(objectOf(rolloutId), (_instance, state) => {
    const sql = state.storage.sql;
    const meta = JSON.parse(
      sql.exec<{ value: string }>(`SELECT value FROM meta WHERE key = 'state'`).one().value,
    ) as { revision: number };
    const step = sql
      .exec<{ state: string | null }>(`SELECT state FROM steps ORDER BY step_index DESC LIMIT 1`)
      .toArray()[0]?.state;
    return {
      meta: meta.revision,
      step: step ? (JSON.parse(step) as { revision: number }).revision : null,
    };
  });
}

describe("the session state stored with each step", () => {
  it("reads back after a restart exactly as the last commit left it, and as the finish left it after that", async () => {
    const rolloutId = uniqueId("state-in-step");
    const session = await createByHand(rolloutId);
    const leased = await session.lease("driver-a");
    if (!leased.ok) throw new Error(`lease refused: ${leased.reason}`);
    for (let index = 0; index < 3; index++)
      expect(
        await session.commitStep(leased.lease.lease_id, fakeCommit(rolloutId, index)),
      ).toMatchObject({ ok: true, duplicate: false });
    const committed = await readState(rolloutId);
    expect(committed).toMatchObject({
      step_count: 3,
      llm_calls: 3,
      prompt_tokens: 9,
      completion_tokens: 6,
    });
    // The commits wrote their state into the step rows only; the meta row is the lease's.
    const revisions = await storedRevisions(rolloutId);
    expect(revisions.step).toBe(committed.revision);
    expect(revisions.meta).toBeLessThan(committed.revision);

    await restart(rolloutId);
    expect(await readState(rolloutId)).toEqual(committed);
    // The restarted object goes on from there: the lease is still its driver's, the next step is 3.
    expect(
      await sessionOf(rolloutId).commitStep(leased.lease.lease_id, fakeCommit(rolloutId, 3)),
    ).toMatchObject({ ok: true, duplicate: false });
    const finished = await sessionOf(rolloutId).finish(leased.lease.lease_id, {
      termination_reason: "ENV_DONE",
      reward: 1,
      error: null,
    });
    expect(finished).toMatchObject({ ok: true, status: "succeeded" });
    // The end sets the alarm that publishes the rollout (a state write of its own): read once it ran.
    const ended = await waitFor("the rollout's publication", async () => {
      const state = await readState(rolloutId);
      return state.publication.status === "published" ? state : undefined;
    });

    await restart(rolloutId);
    const reread = await readState(rolloutId);
    expect(reread).toEqual(ended);
    expect(reread).toMatchObject({
      status: "succeeded",
      step_count: 4,
      llm_calls: 4,
      reward: 1,
      lease: null,
    });
  });

  it("adds the column to a steps table of the earlier layout and keeps the state its meta row holds", async () => {
    const rolloutId = uniqueId("state-old-layout");
    const session = await createByHand(rolloutId);
    const leased = await session.lease("driver-a");
    if (!leased.ok) throw new Error(`lease refused: ${leased.reason}`);
    // The earlier layout: no state column, the state only in meta.
    await runInDurableObject(objectOf(rolloutId), (_instance, state) => {
      state.storage.sql.exec(`DROP TABLE steps`);
      state.storage.sql.exec(
        `CREATE TABLE steps (step_index INTEGER PRIMARY KEY, step_id TEXT NOT NULL, body TEXT NOT NULL, env_snapshot TEXT)`,
      );
    });
    const before = await readState(rolloutId);
    await restart(rolloutId);
    expect(await readState(rolloutId)).toEqual(before);
    expect(
      await sessionOf(rolloutId).commitStep(leased.lease.lease_id, fakeCommit(rolloutId, 0)),
    ).toMatchObject({ ok: true, duplicate: false });
    const committed = await readState(rolloutId);
    await restart(rolloutId);
    expect(await readState(rolloutId)).toEqual(committed);
    expect(committed).toMatchObject({ step_count: 1, llm_calls: 1 });
  });
});
