/**
 * @module The online pages and the playground in Chromium: an application and a two-version split
 * over the stack's simulator; a person chats in the playground and rates the answer; the
 * application's page then counts the session and its feedback under the version the API says
 * served it. The page never holds the admin token or the application key.
 */
import { expect, it } from "vitest";
import { screenshotPath } from "../../fixtures/browser";
import { TOKEN, run, text, type DashboardContext } from "./dashboard-fixtures";

interface SessionView {
  session_id: string;
  version: number;
  status: string;
  feedback: Array<{ reward: number; label: string | null; source: string }>;
  llm_calls: unknown[];
}

/** Registers these tests; the page was logged in by the first group. */
export function onlinePages(ctx: DashboardContext): void {
  it("playground: chats through the split, rates the answer, and the app page counts both under the session's version", async () => {
    const { stack, api, browser, page } = ctx;
    const { app, api_key } = await api.post<{ app: { app_id: string }; api_key: string }>(
      "/v1/online/apps",
      { name: `${run}-app`, settings: { feedback_window_ms: 600_000, retention_ms: 600_000 } },
    );
    const replicas = [`${stack.modelServerUrl}/v1`];
    const serving = await fetch(`${stack.workerUrl}/v1/online/serving`, {
      method: "PUT",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({
        versions: {
          "1": { backend: { name: "vllm", replicas } },
          "2": { backend: { name: "vllm", replicas } },
        },
        weights: { "1": 50, "2": 50 },
      }),
    });
    expect(serving.status).toBe(200);

    const anonymous = await browser.newContext();
    const stranger = await anonymous.newPage();
    await stranger.goto(`${stack.workerUrl}/online/${app.app_id}/playground`);
    expect(new URL(stranger.url()).pathname).toBe("/login");
    const refused = await stranger.evaluate(
      async (path) => (await fetch(path, { method: "POST", body: "{}" })).status,
      `/online/${app.app_id}/playground/chat`,
    );
    expect(refused).toBe(401);
    await anonymous.close();

    await page.goto(`${stack.workerUrl}/online`);
    await page.click(`tr[data-app="${app.app_id}"] a[href="/online/${app.app_id}"]`);
    await page.click("#open-playground");
    await page.locator("#session-id").waitFor();
    const sessionId = await text(page, "#session-id");
    expect(sessionId).toMatch(/^pg-/);
    const html = await page.content();
    expect(html).not.toContain(TOKEN);
    expect(html).not.toContain(api_key);
    const badStatus = await page.evaluate(
      async (path) =>
        (
          await fetch(path, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ session_id: "x", messages: [] }),
          })
        ).status,
      `/online/${app.app_id}/playground/chat`,
    );
    expect(badStatus).toBe(422);

    await page.fill("#chat-input", "What is 2 + 2?");
    await page.click("#chat-send");
    const answer = page.locator(".msg.assistant.answer").first();
    await answer.waitFor({ timeout: 15_000 });
    await page.click('.msg.assistant [data-rate="up"]');
    await page.locator('.rating[data-rated="up"]').waitFor();
    await page.screenshot({ path: screenshotPath("online-playground") });

    const sessionResponse = await fetch(`${stack.workerUrl}/v1/online/sessions/${sessionId}`, {
      headers: { authorization: `Bearer ${api_key}` },
    });
    const session = (await sessionResponse.json()) as SessionView;
    expect(session.llm_calls).toHaveLength(1);
    expect(session.feedback.map((f) => [f.reward, f.label, f.source])).toEqual([
      [1, "thumbs_up", "playground"],
    ]);
    const other = session.version === 1 ? "2" : "1";

    await page.goto(`${stack.workerUrl}/online/${app.app_id}`);
    const row = (version: string, field: string) =>
      text(page, `tr[data-version="${version}"] [data-field="${field}"]`);
    expect(await row(String(session.version), "sessions")).toBe("1");
    expect(await row(String(session.version), "feedback")).toBe("1");
    expect(await row(String(session.version), "open")).toBe("1");
    expect(await row(String(session.version), "share")).toBe("50.0%");
    expect(await row(other, "sessions")).toBe("0");
    expect(await text(page, `tr[data-session="${sessionId}"] [data-field="version"]`)).toBe(
      String(session.version),
    );
    expect(await text(page, '[data-field="guard-state"]')).toContain("off");
    await page.screenshot({ path: screenshotPath("online-app"), fullPage: true });
    // The session's recorded call opens as a rollout.
    await page.click(`tr[data-session="${sessionId}"] a`);
    expect(decodeURIComponent(new URL(page.url()).pathname)).toBe(
      `/rollouts/online:${app.app_id}:${sessionId}`,
    );
    expect(await page.locator("h1").first().textContent()).toContain(sessionId);
  }, 30_000);
}
