/**
 * Integration: the openai client through `/v1/online` with an application key; each conversation a
 * session recorded token-exact with its serving version, sticky across a new split, never refused
 * while the trainer syncs weights; split and serving input checked (422 naming the field).
 */
import { describe, expect, it } from "vitest";
import { api } from "../../fixtures/rollouts";
import { createExternal, openaiFor } from "../../fixtures/external-rollouts";
import { expectProblem } from "../fixtures/feed-fixtures";
import { chat, createApp, onlineClient, readSession, send, serveVersions } from "./online-fixtures";

const sessionId = (label: string) => `${label}-${crypto.randomUUID().slice(0, 8)}`;

describe("online serving (integration)", () => {
  it("serves the openai client and records the call token-exact with the version that served it", async () => {
    await serveVersions({ "4": 1 });
    const { api_key } = await createApp();
    const id = sessionId("exact");
    await chat(api_key, id);
    await chat(api_key, id);
    const session = await readSession(api_key, id);
    expect(session).toMatchObject({ version: 4, status: "open" });
    expect(session.llm_calls).toHaveLength(2);
    for (const call of session.llm_calls) {
      expect(call.policy_version_start).toBe(4);
      expect(call.prompt_token_ids.length).toBeGreaterThan(0);
      expect(call.completion_token_ids.length).toBeGreaterThan(0);
    }
  });

  it("streams an answer to the openai client and records the streamed call", async () => {
    await serveVersions({ "3": 1 });
    const { api_key } = await createApp();
    const id = sessionId("stream");
    const stream = await onlineClient(api_key, id).chat.completions.create({
      model: "any",
      messages: [{ role: "user", content: "What is 2 + 2?" }],
      max_tokens: 8,
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
    expect(text.length).toBeGreaterThan(0);
    const [call] = (await readSession(api_key, id)).llm_calls;
    expect(call?.policy_version_start).toBe(3);
    expect(call?.completion_token_ids.length).toBeGreaterThan(0);
  });

  it("keeps a running conversation on its version when the split changes; new ones follow the split", async () => {
    await serveVersions({ "3": 1 });
    const { api_key } = await createApp();
    const running = sessionId("sticky");
    await chat(api_key, running);
    expect((await send("PUT", "/v1/online/split", { weights: { "3": 0, "4": 5 } })).status).toBe(
      200,
    );
    await chat(api_key, running);
    const fresh = sessionId("fresh");
    await chat(api_key, fresh);
    const kept = await readSession(api_key, running);
    expect(kept.version).toBe(3);
    expect(kept.llm_calls.map((c) => c.policy_version_start)).toEqual([3, 3]);
    expect((await readSession(api_key, fresh)).version).toBe(4);
  });

  it("answers a live user while a training weight sync is under way, never 429", async () => {
    await serveVersions({ "3": 1 });
    const { api_key } = await createApp();
    const rollout = await createExternal();
    const begun = await api("/v1/policy/sync/begin", {
      method: "POST",
      body: JSON.stringify({ wait_ms: 0 }),
    });
    expect(begun.status).toBe(200);
    try {
      // A rollout's gateway is fenced meanwhile (429 "syncing"); the serving path is not.
      const fenced = await openaiFor(rollout.llm.base_url, rollout.llm.api_key)
        .chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] })
        .then(
          () => 200,
          (error: { status?: number }) => error.status,
        );
      expect(fenced).toBe(429);
      await chat(api_key, sessionId("during-sync"));
    } finally {
      await api("/v1/policy/sync/abort", { method: "POST", body: "{}" });
    }
  });

  it("refuses a split naming a version not served, or summing to nothing, with 422 naming the field", async () => {
    await serveVersions({ "3": 1 });
    const unknown = await expectProblem(
      await send("PUT", "/v1/online/split", { weights: { "3": 1, "9": 1 } }),
      422,
    );
    expect(unknown.errors?.map((e) => e.path)).toEqual(["weights.9"]);
    const zero = await expectProblem(
      await send("PUT", "/v1/online/split", { weights: { "3": 0 } }),
      422,
    );
    expect(zero.errors?.map((e) => e.path)).toEqual(["weights"]);
    const negative = await expectProblem(
      await send("PUT", "/v1/online/split", { weights: { "3": -1 } }),
      422,
    );
    expect(negative.errors?.map((e) => e.path)).toEqual(["weights.3"]);
    const backend = await expectProblem(
      await send("PUT", "/v1/online/serving", {
        versions: { "5": { backend: { name: "vllm", replicas: [] } } },
      }),
      422,
    );
    expect(backend.errors?.[0]?.path).toMatch(/^versions\.5\.backend/);
  });

  it("asks for the conversation header, naming it", async () => {
    const { api_key } = await createApp();
    const response = await send(
      "POST",
      "/v1/online/chat/completions",
      { model: "m", messages: [] },
      api_key,
    );
    const problem = await expectProblem(response, 400);
    expect(problem.errors?.map((e) => e.path)).toEqual(["x-edge-rollout-session"]);
  });
});
