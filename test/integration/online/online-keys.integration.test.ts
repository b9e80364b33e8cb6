/** Integration: application keys are created (shown once), listed by prefix, revoked; unknown and revoked keys get 401, and a key past its rate limit 429. */
import { describe, expect, it } from "vitest";
import { expectProblem } from "../fixtures/feed-fixtures";
import { createApp, send, serveVersions } from "./online-fixtures";

describe("application keys (integration)", () => {
  it("shows a new key once, lists the application by the key's prefix, and stores no key", async () => {
    const created = await createApp();
    expect(created.api_key).toMatch(/^ero_app-[0-9a-f]{12}_/);
    const listed = (await (await send("GET", "/v1/online/apps")).json()) as {
      apps: Array<Record<string, unknown>>;
    };
    const app = listed.apps.find((a) => a.app_id === created.app.app_id)!;
    expect(app.key_prefix).toBe(created.app.key_prefix);
    expect(created.api_key.startsWith(String(app.key_prefix).slice(0, -1))).toBe(true);
    expect(JSON.stringify(listed)).not.toContain(created.api_key);
  });

  it("answers 401 problem+json to a missing, malformed, unknown or revoked key, before the body", async () => {
    await serveVersions({ "3": 1 });
    const { app, api_key } = await createApp();
    const unknown = api_key.replace(/.$/, (ch) => (ch === "A" ? "B" : "A"));
    for (const key of [undefined, "not-a-key", unknown]) {
      const problem = await expectProblem(
        await send("GET", "/v1/online/sessions", undefined, key),
        401,
      );
      expect(problem.detail).toMatch(/application key/);
    }
    expect((await send("GET", "/v1/online/sessions", undefined, api_key)).status).toBe(200);
    const revoked = await send("DELETE", `/v1/online/apps/${app.app_id}`);
    expect(((await revoked.json()) as { revoked_at: number | null }).revoked_at).not.toBeNull();
    const problem = await expectProblem(
      await send("POST", "/v1/online/sessions/s1/feedback", "{not json", api_key),
      401,
    );
    expect(problem.detail).toMatch(/revoked/);
    expect((await send("DELETE", "/v1/online/apps/app-000000000000")).status).toBe(404);
  });

  it("refuses a key past its rate limit with 429 and Retry-After", async () => {
    const { api_key } = await createApp({ rate_limit: { per_second: 0.5, burst: 2 } });
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 3; i++) {
      const response = await send("GET", "/v1/online/sessions", undefined, api_key);
      statuses.push(response.status);
      retryAfter ??= response.headers.get("retry-after");
      await response.body?.cancel();
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  });

  it("answers the openai client's 401 in OpenAI's error shape on the chat route", async () => {
    const response = await send(
      "POST",
      "/v1/online/chat/completions",
      { model: "m", messages: [] },
      "ero_nope",
    );
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      /application key/,
    );
  });
});
