/** @module Pages that follow change: a running rollout, a queued batch cancelled from its page, groups dropped as stale. */
import { expect, it } from "vitest";
import { screenshotPath } from "../../fixtures/browser";
import {
  rows,
  run,
  text,
  type Progress,
  type View,
  type DashboardContext,
} from "./dashboard-fixtures";

/** Registers these tests; `ctx` is filled by the file's beforeAll before any runs. */
export function livePages(ctx: DashboardContext): void {
  it("a running rollout's page follows it without a reload", async () => {
    const { stack, api, page, val } = ctx;
    stack.simulator!.configure({ latency: { ttftMs: 1500 } });
    try {
      const row = rows[3]! as {
        prompt: Array<{ content: string }>;
        reward_model: { ground_truth: unknown };
      };
      const created = await api.post<{ rollout_id: string }>("/v1/rollouts", {
        agent: "calculator",
        task: { problem: row.prompt.at(-1)!.content, ground_truth: row.reward_model.ground_truth },
      });
      await page.goto(`${stack.workerUrl}/rollouts/${created.rollout_id}`);
      expect(await page.locator("#live").count()).toBe(1);
      await page.evaluate(
        () => ((window as unknown as { __sameDocument: boolean }).__sameDocument = true),
      );
      const callsAtStart = Number(await text(page, '[data-field="llm-calls"]'));
      await page.waitForFunction(
        () => document.getElementById("live")?.textContent === "finished",
        undefined,
        { timeout: 60_000 },
      );
      await page.waitForFunction(
        () => Number(document.getElementById("rollout-body")?.dataset.updates) > 0,
      );
      const view = await api.get<View>(`/v1/rollouts/${created.rollout_id}`);
      expect(
        await page.evaluate(
          () => (window as unknown as { __sameDocument?: boolean }).__sameDocument,
        ),
      ).toBe(true);
      expect(Number(await text(page, '[data-field="llm-calls"]'))).toBe(view.llm_calls.length);
      expect(view.llm_calls.length).toBeGreaterThan(callsAtStart);
      expect(await text(page, '[data-field="status"] .pill')).toBe(view.status);
      await page.screenshot({ path: screenshotPath("live-rollout"), fullPage: true });
    } finally {
      stack.simulator!.configure({ latency: { ttftMs: 0 } });
    }
  }, 90_000);

  // The same pages at 10,000 rollouts and 50 calls, timed: `npx tsx bench/dashboard/dashboard.bench.ts` (issue 27).
  it("lists a queued batch's first, last and filtered pages with the API's totals, renders a many-call rollout turn by turn, and cancels a batch from its page", async () => {
    const { stack, api, page, val } = ctx;
    const big = `${run}-big`;
    const ROLLOUTS = 400;
    const CALLS = 20;
    const bigRows = Array.from({ length: ROLLOUTS / 4 }, (_, i) => ({
      prompt: `external row ${i}`,
      reward_model: { ground_truth: null },
    }));
    await api.post("/v1/batches", {
      batch_id: big,
      agent: "external",
      rows: bigRows,
      n: 4,
      max_concurrent: 1,
      mode: "val",
      config: { step_timeout_ms: 600_000 },
    });
    for (const [query, rowsShown] of [
      ["", 50],
      [`&offset=${ROLLOUTS - 50}`, 50],
      [`&status=not_released&offset=${ROLLOUTS / 2}`, 50],
    ] as const) {
      await page.goto(`${stack.workerUrl}/rollouts?batch=${big}${query}`);
      expect(await page.locator("table.rollouts tr[data-rollout-id]").count(), query).toBe(
        rowsShown,
      );
    }
    // The last page is the not_released filter: its total is the API's, of nearly all of them (one runs at a time).
    const unreleased = await api.get<{ total: number }>(
      `/v1/batches/${big}/rollouts?status=not_released&include_unreleased=true&limit=1`,
    );
    expect(await text(page, '[data-field="total"]')).toBe(String(unreleased.total));
    expect(unreleased.total).toBeGreaterThan(ROLLOUTS - 10);

    const external = await api.post<{
      rollout_id: string;
      llm: { base_url: string; api_key: string };
    }>("/v1/rollouts", { agent: "external", task: { problem: "Talk for many turns." } });
    const messages: Array<{ role: string; content: string }> = [
      { role: "user", content: "Talk for many turns." },
    ];
    for (let i = 0; i < CALLS; i++) {
      const reply = await api.post<{ choices: Array<{ message: { content: string } }> }>(
        "/v1/rollouts/" + external.rollout_id + "/llm/v1/chat/completions",
        { model: "any", messages, max_tokens: 24 },
        { authorization: `Bearer ${external.llm.api_key}` },
      );
      messages.push(
        { role: "assistant", content: reply.choices[0]!.message.content },
        { role: "user", content: `Turn ${i + 2}.` },
      );
    }
    await api.post(`/v1/rollouts/${external.rollout_id}/finish`, { reward: 1 });
    await page.goto(`${stack.workerUrl}/rollouts/${external.rollout_id}`);
    expect(await page.locator(".turn").count()).toBe(CALLS);

    await page.goto(`${stack.workerUrl}/batches/${big}`);
    await page.click("#cancel-batch");
    await page.waitForURL(`${stack.workerUrl}/batches/${big}`);
    expect(["cancelling", "cancelled"]).toContain(
      (await api.get<Progress>(`/v1/batches/${big}`)).status,
    );
    expect(await page.locator("#cancel-batch").count()).toBe(0);
  }, 180_000);

  it("batch page lists the groups the feed dropped as stale after a weight sync, as the API does", async () => {
    const { stack, api, page, val } = ctx;
    const stale = `${run}-stale`;
    await api.post("/v1/batches", {
      batch_id: stale,
      agent: "calculator",
      rows: rows.slice(0, 2),
      n: 2,
      training_mode: "verl/hybrid",
    });
    await api.waitForBatch(stale);
    await page.goto(`${stack.workerUrl}/batches/${stale}`);
    expect(await page.locator("#dropped-groups").count()).toBe(0);
    // A real weight sync moves the policy on; the next pull naming the batch finds its groups too stale for verl/hybrid.
    const { policy_version } = await api.post<{ policy_version: number }>(
      "/v1/policy/sync/begin",
      {},
    );
    await api.post("/v1/policy/sync/end", { policy_version: policy_version + 1 });
    const pulled = await api.post<{ groups: unknown[]; dropped_groups: Array<{ uid: string }> }>(
      "/v1/feed/pull",
      { batch_id: stale, max_groups: 10 },
    );
    expect(pulled.groups).toEqual([]);
    const listed = await api.get<{
      dropped_groups: Array<{
        uid: string;
        reason: string;
        policy_version_start: number;
        policy_version_end: number;
        policy_version: number;
      }>;
    }>(`/v1/batches/${stale}/dropped-groups`);
    expect(listed.dropped_groups.map((g) => g.uid).sort()).toEqual(
      pulled.dropped_groups.map((g) => g.uid).sort(),
    );
    expect(listed.dropped_groups).toHaveLength(2);

    await page.goto(`${stack.workerUrl}/batches/${stale}`);
    expect(await text(page, '#dropped-groups [data-field="dropped-count"]')).toBe("2");
    for (const group of listed.dropped_groups) {
      const row = page.locator(`#dropped-groups tr[data-uid="${group.uid}"]`);
      expect(await row.locator('[data-field="reason"]').textContent()).toBe(group.reason);
      expect(await row.locator('[data-field="versions"]').textContent()).toBe(
        `${group.policy_version_start}–${group.policy_version_end}`,
      );
      expect(await row.locator('[data-field="at-version"]').textContent()).toBe(
        String(group.policy_version),
      );
    }
    await page.screenshot({ path: screenshotPath("batch-dropped-groups"), fullPage: true });
    // The group page says why such a group is never trained.
    await page.goto(`${stack.workerUrl}/groups/${listed.dropped_groups[0]!.uid}`);
    expect(await page.locator('[data-field="verdict"]').getAttribute("data-verdict")).toBe("stale");
    expect(await text(page, '[data-field="verdict"]')).toContain(
      `at version ${listed.dropped_groups[0]!.policy_version}`,
    );
    expect(await page.locator('#members [data-field="advantage-grpo"] .muted').count()).toBe(2); // not trained
    await page.screenshot({ path: screenshotPath("group-stale"), fullPage: true });
  }, 120_000);
}
