/** Integration: bearer-token auth on /v1 routes, off without API_TOKEN and on with it. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../../functions/app";
import "../../fixtures/test-agents";
import { api, uniqueId } from "../../fixtures/rollouts";

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
  [
    "POST",
    "/v1/rollouts",
    { method: "POST", body: JSON.stringify({ agent: "test-loop", task: slowTask }) },
  ],
  ["GET", "/v1/agents", {}],
  ["GET", "/v1/rollouts/some-id", {}],
  ["GET", "/v1/rollouts/some-id/events", {}],
  ["POST", "/v1/rollouts/some-id/cancel", { method: "POST" }],
];

describe("with API_TOKEN set", () => {
  it.each(routes)(
    "refuses %s %s without a token with 401 problem+json",
    async (_method, path, init) => {
      const response = await secured(path, init);
      expect(response.status).toBe(401);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      expect(await response.json()).toMatchObject({
        status: 401,
        detail: "missing Authorization: Bearer token",
      });
    },
  );

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
    const body = JSON.stringify({
      agent: "test-loop",
      task: slowTask,
      rollout_id: rolloutId,
      config: { max_steps: 50 },
    });
    expect((await secured("/v1/rollouts", { method: "POST", body }, bearer)).status).toBe(202);
    expect((await secured("/v1/agents", {}, bearer)).status).toBe(200);
    expect((await secured(`/v1/rollouts/${rolloutId}`, {}, bearer)).status).toBe(200);
    expect(
      (await secured(`/v1/rollouts/${rolloutId}/cancel`, { method: "POST" }, bearer)).status,
    ).toBe(200);
    const events = await secured(`/v1/rollouts/${rolloutId}/events`, {}, bearer);
    expect(events.status).toBe(200);
    expect(await events.text()).toContain("event: end");
  });

  it("leaves /health open", async () => {
    expect((await secured("/health")).status).toBe(200);
  });
});

/** Routes anyone may call with API_TOKEN set: the health probe and the dashboard's login form. */
const OPEN_ROUTES = new Set(["GET /health", "GET /login", "POST /login", "POST /logout"]);
/** A rollout's gateway: its own key, not API_TOKEN (see gateway-keys.integration.test.ts). */
const GATEWAY = /\/llm\//;
/** Every route the app registers, read from the app itself: a route added later is checked too. */
const APP_ROUTES = app.routes
  .filter((route) => route.method !== "ALL")
  .map((route) => ({
    method: route.method,
    path: route.path,
    key: `${route.method} ${route.path}`,
  }));

describe("with API_TOKEN set, every route of the app", () => {
  const guarded = APP_ROUTES.filter((route) => !OPEN_ROUTES.has(route.key));

  it("has the open routes it names, and guards all the others (more than 40)", () => {
    expect(
      [...OPEN_ROUTES].filter((key) => !APP_ROUTES.some((route) => route.key === key)),
    ).toEqual([]);
    expect(guarded.length).toBeGreaterThan(40);
  });

  it.each(guarded)(
    "refuses $method $path without credentials and with a wrong token",
    async ({ method, path }) => {
      const target = path
        .replace(/:attempt\b/g, "1")
        .replace(/:version\b/g, "1")
        .replace(/:[a-z_]+/g, "some-id");
      // A gateway call parses its body before it checks the rollout's key, so it gets a valid one
      // (with "{}" it answers 422 whoever asks).
      const body = !GATEWAY.test(path)
        ? "{}"
        : path.endsWith("/chat/completions")
          ? JSON.stringify({ messages: [{ role: "user", content: "hi" }] })
          : JSON.stringify({ prompt: "hi" });
      const init = method === "GET" ? {} : { method, body };
      for (const authorization of [undefined, `Bearer ${TOKEN}x`]) {
        const response = await secured(target, init, authorization);
        await response.body?.cancel();
        // A dashboard page sends a browser to the login form; everything else answers 401 (or 403 for a
        // cross-origin form post). Never a 2xx, and never the route's own 4xx, which would mean it ran.
        const refused =
          response.status === 401 ||
          response.status === 403 ||
          (response.status === 303 && response.headers.get("location")?.startsWith("/login"));
        expect(
          refused,
          `${method} ${target} (${authorization ?? "no token"}) answered ${response.status}${GATEWAY.test(path) ? " (a gateway route: the rollout's key)" : ""}`,
        ).toBe(true);
      }
    },
  );
});

describe("without API_TOKEN", () => {
  it("serves /v1 routes with no Authorization header", async () => {
    expect(env).not.toHaveProperty("API_TOKEN");
    expect((await api("/v1/agents")).status).toBe(200);
    const created = await api("/v1/rollouts", {
      method: "POST",
      body: JSON.stringify({ agent: "math", task: { problem: "What is 1 + 1?" } }),
    });
    expect(created.status).toBe(202);
  });
});
