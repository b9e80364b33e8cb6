/** @module The login, the overview, the batch page and the rollouts table, each against the API. */
import { expect, it } from "vitest";
import { screenshotPath } from "../../fixtures/browser";
import { TOKEN, rows, text, type Progress, type DashboardContext } from "./dashboard-fixtures";

/** Registers these tests; `ctx` is filled by the file's beforeAll before any runs. */
export function overviewPages(ctx: DashboardContext): void {
  it("refuses every page and the live stream without the session cookie, and logs in through the form", async () => {
    const { stack, api, browser, page, series, train, val } = ctx;
    const anonymous = await browser.newContext();
    const stranger = await anonymous.newPage();
    await stranger.goto(`${stack.workerUrl}/batches/${train[0]}`);
    expect(new URL(stranger.url()).pathname).toBe("/login");
    expect(await stranger.evaluate(async () => (await fetch("/rollouts/x:0:0/live")).status)).toBe(
      401,
    );
    expect(await stranger.evaluate(async () => (await fetch("/v1/batches")).status)).toBe(401);
    for (const path of [`/runs/${series}`, `/groups/${train[0]}:0`]) {
      await stranger.goto(`${stack.workerUrl}${path}`);
      expect(new URL(stranger.url()).pathname).toBe("/login");
    }
    await stranger.fill('input[name="token"]', "not-the-token");
    await stranger.click("#login-submit");
    await stranger.locator("#login-error").waitFor();
    expect(new URL(stranger.url()).pathname).toBe("/login");
    await anonymous.close();

    await page.goto(`${stack.workerUrl}/`);
    await page.fill('input[name="token"]', TOKEN);
    await page.click("#login-submit");
    await page.waitForURL(`${stack.workerUrl}/`);
    expect(await page.evaluate(() => document.cookie)).not.toContain("edge_rollout_session");
  });

  it("overview: policy version, feed by training mode, backend replicas and recent batches equal the API's", async () => {
    const { stack, api, browser, page, series, train, val } = ctx;
    // The feed may still be ingesting the batches' last groups: compare a fresh API read with a
    // fresh page until they agree (or 60 s pass), instead of guessing when the feed has settled.
    const mismatches = async (): Promise<string[]> => {
      const [stats, policy, backends] = await Promise.all([
        api.get<{
          by_training_mode: Record<
            string,
            { ready_groups: number; leased_groups: number; dropped_stale: number }
          >;
        }>("/v1/feed/stats"),
        api.get<{ policy_version: number }>("/v1/policy"),
        api.get<{ replicas: Array<{ replica: string; healthy: boolean; in_flight: number }> }>(
          "/v1/backends",
        ),
      ]);
      await page.goto(`${stack.workerUrl}/`);
      const expected: Array<[string, string]> = [
        ['[data-field="policy-version"]', String(policy.policy_version)],
      ];
      for (const [mode, counts] of Object.entries(stats.by_training_mode)) {
        expected.push([
          `tr[data-training-mode="${mode}"] [data-field="ready"]`,
          String(counts.ready_groups),
        ]);
        expected.push([
          `tr[data-training-mode="${mode}"] [data-field="dropped-stale"]`,
          String(counts.dropped_stale),
        ]);
      }
      for (const replica of backends.replicas) {
        expected.push([
          `tr[data-replica="${replica.replica}"] [data-field="in-flight"]`,
          String(replica.in_flight),
        ]);
        expected.push([
          `tr[data-replica="${replica.replica}"] .pill`,
          replica.healthy ? "healthy" : "unhealthy",
        ]);
      }
      const found: string[] =
        Object.keys(stats.by_training_mode).length === 0
          ? ["no training mode in /v1/feed/stats"]
          : [];
      for (const [selector, value] of expected) {
        const shown = await text(page, selector);
        if (shown !== value) found.push(`${selector}: page ${shown}, API ${value}`);
      }
      return found;
    };
    let found = await mismatches();
    for (
      const deadline = Date.now() + 60_000;
      found.length > 0 && Date.now() < deadline;
      found = await mismatches()
    )
      await new Promise((r) => setTimeout(r, 500));
    expect(found).toEqual([]);
    for (const id of [...train, val])
      expect(await page.locator(`#recent-batches tr[data-batch-id="${id}"]`).count()).toBe(1);
    await page.screenshot({ path: screenshotPath("overview"), fullPage: true });
  });

  it("batch page: counts, reward mean, histogram, reasons and the series chart equal the API's", async () => {
    const { stack, api, browser, page, series, train, val } = ctx;
    const progress = await Promise.all(train.map((id) => api.get<Progress>(`/v1/batches/${id}`)));
    await page.goto(`${stack.workerUrl}/batches/${train[1]}`);
    for (const [status, count] of Object.entries(progress[1]!.counts))
      expect(await text(page, `[data-count="${status}"]`)).toBe(String(count));
    expect(Number(await text(page, '[data-field="reward-mean"]'))).toBeCloseTo(
      progress[1]!.reward.mean!,
      4,
    );
    expect(await text(page, '[data-field="reward-count"]')).toBe(String(progress[1]!.reward.count));
    const bins = await page
      .locator(".histogram .bin")
      .evaluateAll((els) => els.map((el) => Number(el.getAttribute("data-count"))));
    expect(bins.reduce((a, b) => a + b, 0)).toBe(progress[1]!.reward.count);
    for (const [reason, count] of Object.entries(progress[1]!.termination_reasons))
      expect(await text(page, `#termination tr[data-reason="${reason}"] td.num`)).toBe(
        String(count),
      );
    const points = await page
      .locator(".line-chart circle.point")
      .evaluateAll((els) =>
        els.map((el) => [el.getAttribute("data-label"), Number(el.getAttribute("data-value"))]),
      );
    expect(points).toEqual(train.map((id, i) => [id, progress[i]!.reward.mean]));
    await page.screenshot({ path: screenshotPath("batch"), fullPage: true });
  });

  it("rollouts table: filtered totals and the page's rows equal the API's listing", async () => {
    const { stack, api, browser, page, series, train, val } = ctx;
    const listing = await api.get<{ total: number; rollouts: Array<{ rollout_id: string }> }>(
      `/v1/batches/${train[0]}/rollouts?include_unreleased=true&reward_min=1&limit=50`,
    );
    await page.goto(`${stack.workerUrl}/rollouts?batch=${train[0]}&reward_min=1`);
    expect(await text(page, '[data-field="total"]')).toBe(String(listing.total));
    expect(
      await page
        .locator("table.rollouts tr[data-rollout-id]")
        .evaluateAll((els) => els.map((el) => el.getAttribute("data-rollout-id"))),
    ).toEqual(listing.rollouts.map((r) => r.rollout_id));
    await page.goto(`${stack.workerUrl}/rollouts?status=succeeded`);
    const all = await Promise.all(
      [...train, val].map((id) =>
        api.get<{ total: number }>(`/v1/batches/${id}/rollouts?status=succeeded&limit=1`),
      ),
    );
    expect(await text(page, '[data-field="total"]')).toBe(
      String(all.reduce((sum, p) => sum + p.total, 0)),
    );
    await page.screenshot({ path: screenshotPath("rollouts"), fullPage: true });
  });
}
