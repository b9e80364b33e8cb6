/** Integration: the dashboard's login form, its HttpOnly session cookie, and what the cookie does not open. */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../../functions/app";
import "../../fixtures/test-agents";

const TOKEN = "dashboard-s3cret";
const app = createApp();
const securedEnv = { ...env, API_TOKEN: TOKEN };

function request(path: string, init: RequestInit = {}): Promise<Response> {
  return Promise.resolve(app.request(path, { redirect: "manual", ...init }, securedEnv));
}

async function login(token: string, next = "/batches"): Promise<Response> {
  const body = new URLSearchParams({ token, next });
  return request("/login", {
    method: "POST",
    body,
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
}

function sessionCookie(response: Response): string {
  const header = response.headers.get("set-cookie") ?? "";
  return header.split(";")[0]!;
}

describe("dashboard behind API_TOKEN", () => {
  it("sends a page request without a session to the login form, keeping where it was going", async () => {
    const response = await request("/batches?mode=val");
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe(
      `/login?next=${encodeURIComponent("/batches?mode=val")}`,
    );
    expect((await request("/rollouts/x:0:0/live")).status).toBe(401);
  });

  it("refuses a wrong token with the form again and no cookie", async () => {
    const response = await login("wrong");
    expect(response.status).toBe(401);
    expect(response.headers.get("set-cookie")).toBeNull();
    expect(await response.text()).toContain('id="login-error"');
  });

  it("sets an HttpOnly, SameSite=Strict cookie that is not the token, and the cookie opens the pages", async () => {
    const response = await login(TOKEN);
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe("/batches");
    const header = response.headers.get("set-cookie") ?? "";
    expect(header).toMatch(/HttpOnly/i);
    expect(header).toMatch(/SameSite=Strict/i);
    expect(header).not.toContain(TOKEN);
    const page = await request("/batches", { headers: { cookie: sessionCookie(response) } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<h1>Batches</h1>");
  });

  it("does not accept the session cookie on the /v1 API, nor a forged or tampered cookie on pages", async () => {
    const cookie = sessionCookie(await login(TOKEN));
    expect((await request("/v1/batches", { headers: { cookie } })).status).toBe(401);
    const [name, value] = cookie.split("=") as [string, string];
    const [expires, mac] = value.split(".") as [string, string];
    expect(
      (await request("/", { headers: { cookie: `${name}=${Number(expires) + 1}.${mac}` } })).status,
    ).toBe(303);
    expect(
      (await request("/", { headers: { cookie: `${name}=${expires}.${"A".repeat(43)}` } })).status,
    ).toBe(303);
  });

  it("refuses a cross-origin POST even with a session, and never redirects login to another origin", async () => {
    const cookie = sessionCookie(await login(TOKEN));
    const cancel = await request("/batches/some-batch/cancel", {
      method: "POST",
      headers: { cookie, origin: "https://evil.example" },
    });
    expect(cancel.status).toBe(403);
    expect((await login(TOKEN, "//evil.example/")).headers.get("location")).toBe("/");
  });

  it("serves pages to a script with the bearer token", async () => {
    expect((await request("/", { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(
      200,
    );
  });
});
