/**
 * Integration: every route's credential is checked before the route reads anything (issue 51,
 * "every credential checked before anything else"). The routes come from the app itself, so a
 * route added later is checked too: it must have its line in functions/credentials/, and without
 * its credential it answers 401 to a malformed body, not 400 or 422 about the body.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../../functions/app";
import {
  DEFAULT_CREDENTIAL,
  credentialFor,
} from "../../../functions/credentials/route-credentials";

const app = createApp();
const ROUTES = app.routes
  .filter((route) => route.method !== "ALL")
  .map((route) => ({
    method: route.method,
    path: route.path,
    kind: credentialFor(route.path).kind,
  }));
const GUARDED = ROUTES.filter((route) => route.kind !== "open");

/** Sends through the app with API_TOKEN set (as deployed), no credential, a body that is not JSON. */
async function anonymous(method: string, path: string, withToken: boolean): Promise<Response> {
  const ctx = createExecutionContext();
  const filled = path.replace(/:([a-z_]+)/g, (_, name: string) =>
    name === "attempt" ? "1" : `cred-${name}-1`,
  );
  const hasBody = method === "POST" || method === "PUT";
  const response = await app.fetch(
    new Request(`http://w${filled}`, {
      method,
      redirect: "manual",
      ...(hasBody ? { body: "{not json" } : {}),
    }),
    withToken ? { ...env, API_TOKEN: "credentials-test-token" } : env,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return response;
}

describe("every route's credential, before its body (integration)", () => {
  it("gives every route of the app a line of its own in the credentials table", () => {
    expect(ROUTES.filter((route) => credentialFor(route.path) === DEFAULT_CREDENTIAL)).toEqual([]);
    expect(new Set(ROUTES.map((route) => route.kind))).toEqual(
      new Set(["open", "admin", "rollout_key", "dashboard", "app_key"]),
    );
  });

  it.each(GUARDED)(
    "answers $method $path ($kind) without its credential before reading its body",
    async (route) => {
      const response = await anonymous(route.method, route.path, true);
      if (route.kind === "dashboard" && route.method === "GET" && !route.path.endsWith("/live")) {
        expect(response.status).toBe(303);
        expect(response.headers.get("location")).toMatch(/^\/login\?next=/);
      } else expect(response.status).toBe(401);
      await response.body?.cancel();
    },
  );

  it("keeps a rollout's gateway and the online routes closed without their key even where API_TOKEN is not set", async () => {
    for (const route of GUARDED.filter((r) => r.kind === "rollout_key" || r.kind === "app_key")) {
      const response = await anonymous(route.method, route.path, false);
      expect(response.status, `${route.method} ${route.path}`).toBe(401);
      await response.body?.cancel();
    }
  });
});
