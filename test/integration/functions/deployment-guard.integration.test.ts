/**
 * Integration: a deployment never runs open by accident (issue 10 item 12). The real app over the
 * real bindings, with secrets and the local-development flag set per test as a deployment would.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../../functions/app";
import type { AppEnv } from "../../../functions/env";
import { INSECURE_WARNING_HEADER } from "../../../functions/middleware/deployment-guard";
import { uniqueId } from "../../fixtures/rollouts";

const app = createApp();
/** The test pool's bindings as a deployment has them: not local development, no secrets. */
const deployed = {
  ...(env as AppEnv),
  LOCAL_DEV: undefined,
  API_TOKEN: undefined,
  GATEWAY_SECRET: undefined,
} as AppEnv;
const PUBLIC = "https://rollouts.example.com";

function call(
  path: string,
  bindings: AppEnv,
  init: RequestInit = {},
  origin = PUBLIC,
): Promise<Response> {
  return Promise.resolve(app.request(`${origin}${path}`, init, bindings));
}

describe("a deployment without its secrets", () => {
  it("refuses every /v1 request with 503 problem+json naming the missing secrets", async () => {
    for (const bindings of [
      deployed,
      { ...deployed, API_TOKEN: "t" },
      { ...deployed, GATEWAY_SECRET: "g" },
    ]) {
      const response = await call("/v1/agents", bindings, {
        headers: { authorization: "Bearer t" },
      });
      expect(response.status).toBe(503);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      const problem = (await response.json()) as { detail: string };
      for (const name of ["API_TOKEN", "GATEWAY_SECRET"] as const)
        expect(problem.detail.includes(name)).toBe(!bindings[name]);
    }
    expect((await call("/health", deployed)).status).toBe(200);
  });

  it("refuses the dashboard's pages as well, which would otherwise show and cancel every batch", async () => {
    for (const path of ["/", "/batches", "/rollouts", "/login"]) {
      const response = await call(path, deployed);
      expect(response.status, path).toBe(503);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
    }
    expect((await call("/batches", deployed, {}, "http://127.0.0.1:8787")).status).toBe(200);
  });

  it("serves local development (a loopback host) and in-process agent calls without secrets", async () => {
    expect((await call("/v1/agents", deployed, {}, "http://127.0.0.1:8787")).status).toBe(200);
    expect((await call("/v1/agents", deployed, {}, "http://localhost:8787")).status).toBe(200);
    expect((await call("/v1/agents", deployed, {}, "http://edge-rollout.internal")).status).toBe(
      200,
    );
  });

  it("runs open with ALLOW_OPEN_ACCESS=true, warning on every response", async () => {
    const response = await call("/v1/agents", { ...deployed, ALLOW_OPEN_ACCESS: "true" });
    expect(response.status).toBe(200);
    expect(response.headers.get(INSECURE_WARNING_HEADER)).toContain("rollout keys are forgeable");
  });
});

describe("a deployment with both secrets", () => {
  const secured = {
    ...deployed,
    API_TOKEN: "token-one",
    GATEWAY_SECRET: "gateway-secret",
  } as AppEnv;

  it("keeps live rollouts' keys valid when API_TOKEN is rotated (keys are signed with GATEWAY_SECRET)", async () => {
    const created = await call("/v1/rollouts", secured, {
      method: "POST",
      headers: { authorization: "Bearer token-one" },
      body: JSON.stringify({
        agent: "external",
        rollout_id: uniqueId("rotate"),
        task: { problem: "p" },
      }),
    });
    expect(created.status).toBe(202);
    const { rollout_id, llm } = (await created.json()) as {
      rollout_id: string;
      llm: { api_key: string };
    };
    const models = (bindings: AppEnv, key: string) =>
      call(`/v1/rollouts/${rollout_id}/llm/v1/models`, bindings, {
        headers: { authorization: `Bearer ${key}` },
      });
    expect((await models(secured, llm.api_key)).status).toBe(200);
    expect((await models({ ...secured, API_TOKEN: "token-two" }, llm.api_key)).status).toBe(200);
    // A key signed with the public local-development secret is not honoured here.
    const local = (await (
      await call(
        "/v1/rollouts",
        { ...deployed, LOCAL_DEV: "true" },
        {
          method: "POST",
          body: JSON.stringify({ agent: "external", rollout_id, task: { problem: "p" } }),
        },
      )
    ).json()) as { llm: { api_key: string } };
    expect(local.llm.api_key).not.toBe(llm.api_key);
    expect((await models(secured, local.llm.api_key)).status).toBe(401);
  });
});
