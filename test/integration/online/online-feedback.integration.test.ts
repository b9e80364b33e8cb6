/**
 * Integration: feedback on an application's own sessions (another's is 404, a non-finite reward
 * 422), combined by the documented rule when the window closes; a session without feedback is
 * withheld, never scored 0; scored sessions reach the feed as samples naming their application,
 * version and feedback; a deleted session is gone with its records.
 */
import { describe, expect, it } from "vitest";
import { api, waitFor } from "../../fixtures/rollouts";
import { expectProblem, postJson } from "../fixtures/feed-fixtures";
import {
  chat,
  createApp,
  readSession,
  send,
  serveVersions,
  type SessionRead,
} from "./online-fixtures";

const sessionId = (label: string) => `${label}-${crypto.randomUUID().slice(0, 8)}`;

/** Polls the session until its window has closed. */
function closed(key: string, id: string): Promise<SessionRead> {
  return waitFor(`session ${id} closed`, async () => {
    const session = await readSession(key, id);
    return session.status === "open" ? undefined : session;
  });
}

/** The samples the feed holds for uids under `prefix` (pulled, then acked). */
async function feedSamples(
  prefix: string,
): Promise<Array<Record<string, unknown> & { extra_fields: Record<string, unknown> }>> {
  const response = await postJson("/v1/feed/pull", {
    max_groups: 100,
    inline: true,
    uid_prefix: prefix,
  });
  const body = (await response.json()) as {
    lease_id: string | null;
    groups: Array<{
      members: Array<{
        samples: Array<Record<string, unknown> & { extra_fields: Record<string, unknown> }>;
      }>;
    }>;
  };
  if (body.lease_id) await postJson("/v1/feed/ack", { lease_id: body.lease_id });
  return body.groups.flatMap((g) => g.members.flatMap((m) => m.samples));
}

describe("online feedback (integration)", () => {
  it("answers 404 to feedback on another application's session and 422 to a non-finite reward", async () => {
    await serveVersions({ "3": 1 });
    const owner = await createApp();
    const other = await createApp();
    const id = sessionId("mine");
    await chat(owner.api_key, id);
    const path = `/v1/online/sessions/${id}/feedback`;
    await expectProblem(await send("POST", path, { reward: 1 }, other.api_key), 404);
    await expectProblem(
      await send("GET", `/v1/online/sessions/${id}`, undefined, other.api_key),
      404,
    );
    const infinite = await expectProblem(
      await send("POST", path, '{"reward": 1e999}', owner.api_key),
      422,
    );
    expect(infinite.errors?.map((e) => e.path)).toEqual(["reward"]);
    const text = await expectProblem(
      await send("POST", path, { reward: "good" }, owner.api_key),
      422,
    );
    expect(text.errors?.map((e) => e.path)).toEqual(["reward"]);
    expect((await send("POST", path, { reward: 1 }, owner.api_key)).status).toBe(201);
  });

  it("scores a session by the last reward of each source, averaged, and feeds its samples tagged with app, version and feedback", async () => {
    await serveVersions({ "4": 1 });
    const { app, api_key } = await createApp({ feedback_window_ms: 600, retention_ms: 60_000 });
    const id = sessionId("scored");
    await chat(api_key, id);
    const path = `/v1/online/sessions/${id}/feedback`;
    for (const event of [
      { reward: 0, source: "user", label: "thumbs_down" },
      { reward: 1, source: "user", label: "thumbs_up" },
      { reward: 0, source: "task" },
    ])
      expect((await send("POST", path, event, api_key)).status).toBe(201);
    const session = await closed(api_key, id);
    expect(session).toMatchObject({ status: "scored", reward: 0.5 });
    await expectProblem(await send("POST", path, { reward: 1 }, api_key), 409);
    const samples = await waitFor("the scored sample in the feed", async () => {
      const found = await feedSamples(`online:${app.app_id}:${id}`);
      return found.length > 0 ? found : undefined;
    });
    expect(samples).toHaveLength(1);
    expect(samples[0]).toMatchObject({ reward_score: 0.5, policy_version: { start: 4, end: 4 } });
    expect(samples[0]!.extra_fields.online).toMatchObject({
      app_id: app.app_id,
      session_id: id,
      version: 4,
      behaviour_version: 4,
      status: "scored",
      rule: "mean_of_last_per_source",
      feedback: [
        { source: "user", reward: 0 },
        { source: "user", reward: 1 },
        { source: "task", reward: 0 },
      ],
    });
  });

  it("withholds a session whose window closes without feedback: no reward, never scored 0, nothing trained", async () => {
    await serveVersions({ "3": 1 });
    const { app, api_key } = await createApp({ feedback_window_ms: 300, retention_ms: 60_000 });
    const id = sessionId("silent");
    await chat(api_key, id);
    const session = await closed(api_key, id);
    expect(session).toMatchObject({ status: "withheld", reward: null });
    const rollout = await waitFor("the withheld rollout ended", async () => {
      const view = (await (await api(`/v1/rollouts/${session.rollout_id}`)).json()) as Record<
        string,
        unknown
      >;
      return view.status === "running" ? undefined : view;
    });
    expect(rollout).toMatchObject({
      reward: null,
      outcome: "infra",
      online: { status: "withheld" },
    });
    // The feed got it (delivery confirmed) and withheld it: nothing to pull.
    await waitFor("the feed confirmed the withheld session", async () => {
      const view = (await (await api(`/v1/rollouts/${session.rollout_id}`)).json()) as {
        publication: { delivery: { confirmed_at: number | null } | null };
      };
      return view.publication.delivery?.confirmed_at ? true : undefined;
    });
    expect(await feedSamples(`online:${app.app_id}:${id}`)).toEqual([]);
  });

  it("groups sessions that share a prompt key, so the trainer gets them as one group", async () => {
    await serveVersions({ "3": 1 });
    const { app, api_key } = await createApp({
      feedback_window_ms: 300,
      retention_ms: 60_000,
      prompt_group_size: 2,
    });
    const ids = [sessionId("pk-a"), sessionId("pk-b")];
    for (const [i, id] of ids.entries()) {
      await chat(api_key, id, "faq-7");
      await send("POST", `/v1/online/sessions/${id}/feedback`, { reward: i }, api_key);
    }
    const prefix = `online:${app.app_id}:p:faq-7:`;
    const response = await waitFor("the prompt key's group in the feed", async () => {
      const pulled = (await (
        await postJson("/v1/feed/pull", { max_groups: 10, inline: true, uid_prefix: prefix })
      ).json()) as {
        lease_id: string | null;
        groups: Array<{ uid: string; members: Array<{ samples: unknown[] }> }>;
      };
      return pulled.groups.length > 0 ? pulled : undefined;
    });
    if (response.lease_id) await postJson("/v1/feed/ack", { lease_id: response.lease_id });
    expect(response.groups.map((g) => [g.uid, g.members.length])).toEqual([[`${prefix}0`, 2]]);
  });

  it("deletes a session once its retention has passed", async () => {
    await serveVersions({ "3": 1 });
    const { api_key } = await createApp({ feedback_window_ms: 100, retention_ms: 1_000 });
    const id = sessionId("expire");
    await chat(api_key, id);
    const { rollout_id } = await readSession(api_key, id);
    await waitFor("the expired session deleted", async () => {
      const response = await send("GET", `/v1/online/sessions/${id}`, undefined, api_key);
      await response.body?.cancel();
      return response.status === 404 ? true : undefined;
    });
    expect((await api(`/v1/rollouts/${rollout_id}`)).status).toBe(404);
  });

  it("deletes a session on request, with its recorded calls", async () => {
    await serveVersions({ "3": 1 });
    const { api_key } = await createApp();
    const id = sessionId("forget-me");
    await chat(api_key, id);
    const { rollout_id } = await readSession(api_key, id);
    expect((await send("DELETE", `/v1/online/sessions/${id}`, undefined, api_key)).status).toBe(
      204,
    );
    await expectProblem(await send("GET", `/v1/online/sessions/${id}`, undefined, api_key), 404);
    expect((await api(`/v1/rollouts/${rollout_id}`)).status).toBe(404);
    await expectProblem(await send("DELETE", `/v1/online/sessions/${id}`, undefined, api_key), 404);
  });
});
