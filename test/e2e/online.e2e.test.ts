/**
 * End to end (the Miniflare stack + two vLLM simulators on loopback), issue 55's goal: an
 * application key, a 50/50 split over two serving versions (one simulator each), 100 conversations
 * through the real `openai` client, feedback on 80 (a quarter of it delayed), the window closing
 * on the other 20: 80 scored samples in the feed, each tagged with its session's version, the
 * versions within binomial noise of 50/50, 20 sessions withheld, none lost; then the guard takes
 * out a candidate whose simulated users like its answers less.
 */
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { resolve } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MiniflareStack, startMiniflareStack } from "../../scripts/miniflare-stack";
import { startVllmSimulator, type VllmSimulator } from "../../tools/simulator";
import { freePort } from "../../tools/simulator/free-port";

const CONVERSATIONS = 100;
const WITH_FEEDBACK = 80;
/** Feedback is accepted this long after a session's first call; short, so the test is. */
const WINDOW_MS = 4_000;
/** Every fourth feedback comes this late (still inside its window). */
const DELAY_MS = 1_500;
/** Four standard deviations of Binomial(n, 0.5): a fair split fails this about once in 16,000 runs. */
const fourSd = (n: number) => 4 * Math.sqrt(n / 4);
const CHAT = "POST /v1/chat/completions";

const stateDir = `.tmp/e2e-online-${randomUUID().slice(0, 8)}`;
let sims: VllmSimulator[] = [];
let stack: MiniflareStack;

async function call(method: string, path: string, body?: unknown, key?: string): Promise<unknown> {
  const response = await fetch(`${stack.workerUrl}${path}`, {
    method,
    headers: {
      "content-type": "application/json",
      ...(key ? { authorization: `Bearer ${key}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
  return text ? JSON.parse(text) : null;
}

async function eachLimited<T>(
  items: T[],
  limit: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

beforeAll(async () => {
  sims = await Promise.all(
    [1, 2].map((seed) =>
      startVllmSimulator({ port: 0, seed, latency: { ttftMs: 0, perTokenMs: 0 } }),
    ),
  );
  stack = await startMiniflareStack({
    workerPort: await freePort(),
    modelServerUrl: sims[0]!.url,
    stateDir,
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await Promise.all(sims.map((sim) => sim.close()));
  rmSync(resolve(import.meta.dirname, "../..", stateDir), { recursive: true, force: true });
});

describe("online RL from live traffic (e2e)", () => {
  it("splits 100 conversations 50/50, scores the 80 with feedback into the feed, withholds 20, loses none", async () => {
    const { app, api_key } = (await call("POST", "/v1/online/apps", {
      name: "e2e",
      settings: {
        feedback_window_ms: WINDOW_MS,
        retention_ms: 600_000,
        rate_limit: { per_second: 1000, burst: 1000 },
      },
    })) as { app: { app_id: string }; api_key: string };
    await call("PUT", "/v1/online/serving", {
      versions: {
        "3": { backend: { name: "vllm", replicas: [`${sims[0]!.url}/v1`] } },
        "4": { backend: { name: "vllm", replicas: [`${sims[1]!.url}/v1`] } },
      },
      weights: { "3": 50, "4": 50 },
    });
    const ids = Array.from({ length: CONVERSATIONS }, (_, i) => `conv-${i}`);
    const delayed: Array<Promise<unknown>> = [];
    await eachLimited(ids, 8, async (id) => {
      const i = Number(id.slice(5));
      const client = new OpenAI({
        baseURL: `${stack.workerUrl}/v1/online`,
        apiKey: api_key,
        maxRetries: 0,
        defaultHeaders: { "x-edge-rollout-session": id },
      });
      const reply = await client.chat.completions.create({
        model: "any",
        messages: [{ role: "user", content: `Question ${i}: what is ${i} + 1?` }],
        max_tokens: 4,
      });
      expect(reply.choices[0]?.message).toBeDefined();
      if (i >= WITH_FEEDBACK) return;
      const feedback = () =>
        call(
          "POST",
          `/v1/online/sessions/${id}/feedback`,
          { reward: i % 2, source: "user" },
          api_key,
        );
      if (i % 4 === 0) delayed.push(new Promise((r) => setTimeout(r, DELAY_MS)).then(feedback));
      else await feedback();
    });
    await Promise.all(delayed);

    type Session = { session_id: string; version: number; status: string; reward: number | null };
    let sessions: Session[] = [];
    const deadline = Date.now() + WINDOW_MS + 20_000;
    while (Date.now() < deadline) {
      sessions = (
        (await call("GET", "/v1/online/sessions?limit=1000", undefined, api_key)) as {
          sessions: Session[];
        }
      ).sessions;
      if (sessions.length === CONVERSATIONS && sessions.every((s) => s.status !== "open")) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const scored = sessions.filter((s) => s.status === "scored");
    const withheld = sessions.filter((s) => s.status === "withheld");
    expect(scored.map((s) => Number(s.session_id.slice(5))).every((i) => i < WITH_FEEDBACK)).toBe(
      true,
    );
    expect([scored.length, withheld.length]).toEqual([
      WITH_FEEDBACK,
      CONVERSATIONS - WITH_FEEDBACK,
    ]);
    expect(withheld.every((s) => s.reward === null)).toBe(true);

    // Each version's pool served exactly its sessions' calls.
    const onV3 = sessions.filter((s) => s.version === 3).length;
    expect(Math.abs(onV3 - CONVERSATIONS / 2)).toBeLessThanOrEqual(fourSd(CONVERSATIONS));
    expect([
      sims[0]!.stats().byEndpoint[CHAT] ?? 0,
      sims[1]!.stats().byEndpoint[CHAT] ?? 0,
    ]).toEqual([onV3, CONVERSATIONS - onV3]);

    // The feed holds one sample per scored session, tagged with its version; nothing else.
    const versionOf = new Map(sessions.map((s) => [s.session_id, s.version]));
    const pulled: Array<{ session_id: string; version: number; start: number; reward: number }> =
      [];
    const feedDeadline = Date.now() + 20_000;
    while (pulled.length < WITH_FEEDBACK && Date.now() < feedDeadline) {
      const body = (await call("POST", "/v1/feed/pull", {
        max_groups: 100,
        inline: true,
        uid_prefix: `online:${app.app_id}:`,
      })) as {
        lease_id: string | null;
        groups: Array<{
          members: Array<{
            samples: Array<{
              reward_score: number;
              policy_version: { start: number };
              extra_fields: { online: { session_id: string; version: number } };
            }>;
          }>;
        }>;
      };
      for (const sample of body.groups.flatMap((g) => g.members.flatMap((m) => m.samples)))
        pulled.push({
          session_id: sample.extra_fields.online.session_id,
          version: sample.extra_fields.online.version,
          start: sample.policy_version.start,
          reward: sample.reward_score,
        });
      if (body.lease_id) await call("POST", "/v1/feed/ack", { lease_id: body.lease_id });
      else await new Promise((r) => setTimeout(r, 250));
    }
    expect(pulled).toHaveLength(WITH_FEEDBACK);
    expect(new Set(pulled.map((p) => p.session_id))).toEqual(
      new Set(scored.map((s) => s.session_id)),
    );
    for (const p of pulled) {
      expect([p.version, p.start]).toEqual([
        versionOf.get(p.session_id),
        versionOf.get(p.session_id),
      ]);
      expect(p.reward).toBe(Number(p.session_id.slice(5)) % 2);
    }
    const scoredOnV3 = pulled.filter((p) => p.version === 3).length;
    expect(Math.abs(scoredOnV3 - WITH_FEEDBACK / 2)).toBeLessThanOrEqual(fourSd(WITH_FEEDBACK));
  }, 60_000);

  it("takes a candidate whose users' feedback is worse out of the split, logs it, and keeps new conversations off it", async () => {
    const { api_key } = (await call("POST", "/v1/online/apps", {
      name: "e2e guard",
      settings: { feedback_window_ms: WINDOW_MS, rate_limit: { per_second: 1000, burst: 1000 } },
    })) as { api_key: string };
    await call("PUT", "/v1/online/split", { weights: { "3": 50, "4": 50 } });
    await call("PUT", "/v1/online/guard", {
      enabled: true,
      stable: "3",
      min_sessions: 10,
      z: 2.58,
    });
    const ask = async (id: string): Promise<number> => {
      const client = new OpenAI({
        baseURL: `${stack.workerUrl}/v1/online`,
        apiKey: api_key,
        maxRetries: 0,
        defaultHeaders: { "x-edge-rollout-session": id },
      });
      await client.chat.completions.create({
        model: "any",
        messages: [{ role: "user", content: `Guard question ${id}.` }],
        max_tokens: 4,
      });
      const session = (await call("GET", `/v1/online/sessions/${id}`, undefined, api_key)) as {
        version: number;
      };
      return session.version;
    };
    // Simulated users: 4 in 5 like the stable version's answers, 1 in 5 the candidate's.
    const ids = Array.from({ length: 60 }, (_, i) => `guard-${i}`);
    await eachLimited(ids, 8, async (id) => {
      const i = Number(id.slice(6));
      const version = await ask(id);
      const liked = version === 3 ? i % 5 !== 0 : i % 5 === 0;
      await call(
        "POST",
        `/v1/online/sessions/${id}/feedback`,
        { reward: liked ? 1 : 0, source: "thumbs" },
        api_key,
      );
    });
    type Guard = { log: Array<{ action: string; version: string }> };
    let guard: Guard = { log: [] };
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      guard = (await call("GET", "/v1/online/guard")) as Guard;
      if (guard.log.some((entry) => entry.action === "remove")) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(guard.log.filter((entry) => entry.action === "remove")).toMatchObject([
      { action: "remove", version: "4" },
    ]);
    const serving = (await call("GET", "/v1/online/serving")) as {
      weights: Record<string, number>;
    };
    expect(serving.weights).toEqual({ "3": 50, "4": 0 });
    // New conversations all land on the stable version now.
    const after = await Promise.all(Array.from({ length: 10 }, (_, i) => ask(`after-guard-${i}`)));
    expect(new Set(after)).toEqual(new Set([3]));
    await call("PUT", "/v1/online/guard", { enabled: false });
  }, 60_000);
});
