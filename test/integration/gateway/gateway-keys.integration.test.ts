import { describe, expect, it } from "vitest";
import { createExternal, openaiFor } from "../../fixtures/external-rollouts";
import { api } from "../../fixtures/rollouts";

const ask = (baseURL: string, key: string) =>
  openaiFor(baseURL, key)
    .chat.completions.create({
      model: "any",
      messages: [{ role: "user", content: "What is 1 + 1?" }],
    })
    .then(
      () => 200,
      (error: { status?: number }) => error.status ?? -1,
    );

describe("per-rollout gateway keys (integration)", () => {
  it("accepts a rollout's own key and refuses another rollout's (403) and a forged one (401)", async () => {
    const [mine, theirs] = await Promise.all([createExternal(), createExternal()]);
    expect(await ask(mine.llm.base_url, mine.llm.api_key)).toBe(200);
    expect(await ask(mine.llm.base_url, theirs.llm.api_key)).toBe(403);
    expect(await ask(mine.llm.base_url, `${mine.llm.api_key.slice(0, -2)}xx`)).toBe(401);
    expect(await ask(mine.llm.base_url, "sk-not-a-rollout-key")).toBe(401);
  });

  it("refuses calls to a finished rollout with 409", async () => {
    const rollout = await createExternal();
    const finished = await api(`/v1/rollouts/${rollout.rollout_id}/finish`, {
      method: "POST",
      body: JSON.stringify({ reward: 1 }),
    });
    expect(finished.status).toBe(200);
    expect(await ask(rollout.llm.base_url, rollout.llm.api_key)).toBe(409);
  });

  it("refuses calls to a cancelled rollout with 409", async () => {
    const rollout = await createExternal();
    expect(
      (await api(`/v1/rollouts/${rollout.rollout_id}/cancel`, { method: "POST" })).status,
    ).toBe(200);
    expect(await ask(rollout.llm.base_url, rollout.llm.api_key)).toBe(409);
  });

  it("does not let a rollout key open any other route", async () => {
    const rollout = await createExternal();
    const headers = { authorization: `Bearer ${rollout.llm.api_key}` };
    const { createApp } = await import("../../../functions/app");
    const { env } = await import("cloudflare:workers");
    const guarded = (path: string) =>
      createApp().request(path, { headers }, { ...env, API_TOKEN: "admin-token" });
    expect((await guarded(`/v1/rollouts/${rollout.rollout_id}`)).status).toBe(401);
    expect((await guarded("/v1/agents")).status).toBe(401);
  });

  it("answers a missing Authorization header with 401 problem+json", async () => {
    const rollout = await createExternal();
    const response = await api(`/v1/rollouts/${rollout.rollout_id}/llm/v1/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
  });
});
