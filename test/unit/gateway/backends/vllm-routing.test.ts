import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  backendRegistry,
  createVllmBackend,
  rendezvousOrder,
} from "../../../../src/gateway/backends";
import type { ModelBackend } from "../../../../src/gateway/model-backend";
import { type VllmSimulator, startVllmSimulator } from "../../../../tools/simulator";
import {
  chatBody,
  depsWith,
  modelFailure,
  ssePayloads,
  startScriptedUpstream,
} from "./backend-fixtures";

const ROLLOUTS = Array.from({ length: 30 }, (_, i) => `rollout-${i}`);
const chats = (sim: VllmSimulator) => sim.stats().byEndpoint["POST /v1/chat/completions"] ?? 0;

describe("vllm backend over three replicas, routed by hash", () => {
  let sims: VllmSimulator[];
  let urls: string[];
  const fresh = (): ModelBackend =>
    // Replica URLs with and without /v1 name the same servers.
    backendRegistry.create(
      {
        name: "vllm",
        replicas: sims.map((sim, i) => (i === 0 ? sim.url : `${sim.url}/v1/`)),
        routing: { policy: "hash" },
      },
      depsWith(Date.now),
    );
  beforeAll(async () => {
    sims = await Promise.all(
      [1, 2, 3].map((seed) =>
        startVllmSimulator({ port: 0, seed, latency: { ttftMs: 5, perTokenMs: 0 } }),
      ),
    );
    urls = sims.map((sim) => `${sim.url}/v1`);
  });
  afterAll(() => Promise.all(sims.map((sim) => sim.close())));

  it("keeps each of 30 rollouts on one replica for 4 turns; concurrent first calls land 4..13 per replica", async () => {
    const backend = fresh();
    const before = sims.map(chats);
    const first = await Promise.all(
      ROLLOUTS.map((id) =>
        backend.request("/chat/completions", chatBody(`${id} turn 0`), { rolloutId: id }),
      ),
    );
    const home = new Map(ROLLOUTS.map((id, i) => [id, first[i]!.replica]));
    const perReplica = urls.map((url) => ROLLOUTS.filter((id) => home.get(id) === url).length);
    // Bounded load c = 1.25: no replica takes more than ⌈1.25·30/3⌉ = 13, so none fewer than 30 − 2·13 = 4.
    for (const count of perReplica) expect(count).toBeGreaterThanOrEqual(4);
    for (const count of perReplica) expect(count).toBeLessThanOrEqual(13);
    for (let turn = 1; turn < 4; turn++) {
      const replies = await Promise.all(
        ROLLOUTS.map((id) =>
          backend.request("/chat/completions", chatBody(`${id} turn ${turn}`), {
            rolloutId: id,
            replicaHint: home.get(id),
          }),
        ),
      );
      expect(replies.map((reply) => reply.replica)).toEqual(ROLLOUTS.map((id) => home.get(id)));
    }
    expect(sims.map((sim, i) => chats(sim) - before[i]!)).toEqual(
      perReplica.map((count) => count * 4),
    );
    expect(backend.health!().map((h) => h.in_flight)).toEqual([0, 0, 0]);
  });

  it("keeps a rollout on its replica without a hint after bounded load moved it off its first choice", async () => {
    const backend = fresh();
    const id = ROLLOUTS.find(
      (r) =>
        rendezvousOrder(
          r,
          urls.map((url) => ({ url })),
        )[0]!.url === urls[0],
    )!;
    // Ten open streams pinned to replica 0 put it over ⌈1.25·(10 + 1)/3⌉ = 5 in flight.
    const held = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        backend.openStream("/chat/completions", chatBody(`held ${i}`, { stream: true }), {
          rolloutId: `held-${i}`,
          replicaHint: urls[0],
        }),
      ),
    );
    const detour = (await backend.request("/chat/completions", chatBody(id), { rolloutId: id }))
      .replica;
    await Promise.all(held.map(({ response }) => response.body!.cancel()));
    expect(detour).not.toBe(urls[0]);
    expect(backend.health!()[0]!.in_flight).toBe(0);
    for (let turn = 1; turn < 3; turn++) {
      expect(
        (
          await backend.request("/chat/completions", chatBody(`${id} turn ${turn}`), {
            rolloutId: id,
          })
        ).replica,
      ).toBe(detour);
    }
  });

  it("streams from the rollout's replica and holds its in-flight slot until the body is read", async () => {
    const backend = fresh();
    const { response, replica } = await backend.openStream(
      "/chat/completions",
      chatBody("stream me", { stream: true }),
      { rolloutId: "streamer" },
    );
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    expect(backend.health!().find((h) => h.replica === replica)?.in_flight).toBe(1);
    const payloads = await ssePayloads(response);
    expect(payloads.at(-1)).toBe("[DONE]");
    expect(
      payloads.slice(0, -1).flatMap((p) => JSON.parse(p).choices[0]?.token_ids ?? []).length,
    ).toBeGreaterThan(0);
    expect(backend.health!().find((h) => h.replica === replica)?.in_flight).toBe(0);
  });

  it("maps stream failures like postJson: 4xx final, 5xx retryable with Retry-After, unreachable retryable", async () => {
    const backend = fresh();
    const notFound = await modelFailure(
      backend.openStream("/chat/completions", chatBody("x", { stream: true, model: "nope" }), {
        rolloutId: "s",
      }),
    );
    expect(notFound).toMatchObject({ retryable: false, upstreamStatus: 404 });
    expect(notFound.message).toContain("The model `nope` does not exist.");
    const busy = await startScriptedUpstream({
      status: 503,
      headers: { "retry-after": "7" },
      body: '{"error": {"message": "warming up"}}',
    });
    const overloaded = await modelFailure(
      createVllmBackend({ baseUrl: busy.url }).openStream("/chat/completions", chatBody("x"), {
        rolloutId: "s",
      }),
    );
    await busy.close();
    expect(overloaded).toMatchObject({
      retryable: true,
      upstreamStatus: 503,
      retryAfterSeconds: 7,
    });
    const gone = await modelFailure(
      createVllmBackend({ baseUrl: busy.url }).openStream("/chat/completions", chatBody("x"), {
        rolloutId: "s",
      }),
    );
    expect(gone).toMatchObject({ retryable: true, upstreamStatus: null, status: 502 });
  });

  it("counts tokens on the rollout's replica via /tokenize at the server root", async () => {
    const backend = fresh();
    const { body, replica } = await backend.request("/chat/completions", chatBody("count me"), {
      rolloutId: "counter",
    });
    const sim = sims[urls.indexOf(replica)]!;
    const before = sim.stats().byEndpoint["POST /tokenize"] ?? 0;
    const counted = await backend.countChatTokens!(chatBody("count me"), {
      rolloutId: "counter",
      replicaHint: replica,
    });
    expect(counted).toBe((body as { prompt_token_ids: number[] }).prompt_token_ids.length);
    expect(sim.stats().byEndpoint["POST /tokenize"]).toBe(before + 1);
  });
});
