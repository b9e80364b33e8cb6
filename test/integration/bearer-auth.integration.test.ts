/** Integration: bearer-token auth on /v1 routes, off without API_TOKEN and on with it. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../functions/app";
import "../fixtures/test-agents";
import { api, uniqueId } from "../fixtures/rollouts";

const TOKEN = "s3cret-token";
/** The real app over the real bindings plus an API_TOKEN secret. */
const app = createApp();
const securedEnv = { ...env, API_TOKEN: TOKEN };

function secured(path: string, init: RequestInit = {}, authorization?: string): Promise<Response> {
  const headers = new Headers(init.headers);
  if (authorization !== undefined) headers.set("authorization", authorization);
  return Promise.resolve(app.request(path, { ...init, headers }, securedEnv));
}

const slowTask = { problem: "Say hello.", extra_args: { step_sleep_ms: 100 } };
const routes: Array<[string, string, RequestInit]> = [
  ["POST", "/v1/rollouts", { method: "POST", body: JSON.stringify({ agent: "test-loop", task: slowTask }) }],
  ["GET", "/v1/agents", {}],
  ["GET", "/v1/rollouts/some-id", {}],
  ["GET", "/v1/rollouts/some-id/events", {}],
  ["POST", "/v1/rollouts/some-id/cancel", { method: "POST" }],
];

describe("with API_TOKEN set", () => {
  it.each(routes)("refuses %s %s without a token with 401 problem+json", async (_method, path, init) => {
    const response = await secured(path, init);
    expect(response.status).toBe(401);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(await response.json()).toMatchObject({ status: 401, detail: "missing Authorization: Bearer token" });
  });

  it.each(routes)("refuses %s %s with a wrong token", async (_method, path, init) => {
    const response = await secured(path, init, `Bearer ${TOKEN}x`);
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ detail: "invalid bearer token" });
  });

  it("challenges a refused request with WWW-Authenticate: Bearer", async () => {
    const response = await secured("/v1/agents");
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer\b/);
  });

  it("refuses a token sent with another scheme", async () => {
    expect((await secured("/v1/agents", {}, `Basic ${TOKEN}`)).status).toBe(401);
  });

  it("serves every /v1 route to the right token", async () => {
    const bearer = `Bearer ${TOKEN}`;
    const rolloutId = uniqueId("auth");
    const body = JSON.stringify({ agent: "test-loop", task: slowTask, rollout_id: rolloutId, config: { max_steps: 50 } });
    expect((await secured("/v1/rollouts", { method: "POST", body }, bearer)).status).toBe(202);
    expect((await secured("/v1/agents", {}, bearer)).status).toBe(200);
    expect((await secured(`/v1/rollouts/${rolloutId}`, {}, bearer)).status).toBe(200);
    expect((await secured(`/v1/rollouts/${rolloutId}/cancel`, { method: "POST" }, bearer)).status).toBe(200);
    const events = await secured(`/v1/rollouts/${rolloutId}/events`, {}, bearer);
    expect(events.status).toBe(200);
    expect(await events.text()).toContain("event: end");
  });

  it("leaves /health open", async () => {
    expect((await secured("/health")).status).toBe(200);
  });
});

describe("without API_TOKEN", () => {
  it("serves /v1 routes with no Authorization header", async () => {
    expect(env).not.toHaveProperty("API_TOKEN");
    expect((await api("/v1/agents")).status).toBe(200);
    const created = await api("/v1/rollouts", { method: "POST", body: JSON.stringify({ agent: "math", task: { problem: "What is 1 + 1?" } }) });
    expect(created.status).toBe(202);
  });
});
