/**
 * End to end in a real browser: the local stack behind an API_TOKEN, batches run on it, and every
 * dashboard page checked against the API's own numbers in headless Chromium. Screenshots go to
 * .tmp/screenshots/. Timings on big data are bench/dashboard/dashboard.bench.ts's (the machine is shared).
 * One stack and one browser serve every group (test/e2e/dashboard/), registered in the order they
 * run: the first logs the shared page in.
 */
import { afterAll, beforeAll, describe } from "vitest";
import { startDashboard, type DashboardContext } from "./dashboard/dashboard-fixtures";
import { livePages } from "./dashboard/dashboard-live";
import { onlinePages } from "./dashboard/dashboard-online";
import { overviewPages } from "./dashboard/dashboard-overview";
import { rolloutPages } from "./dashboard/dashboard-rollout";
import { seriesPages } from "./dashboard/dashboard-series";

describe("the dashboard in Chromium against the local stack (end to end)", () => {
  const ctx = {} as DashboardContext;

  beforeAll(async () => {
    Object.assign(ctx, await startDashboard());
  }, 240_000);

  afterAll(async () => {
    await ctx.browser?.close();
    await ctx.stack?.stop();
  });

  overviewPages(ctx);
  rolloutPages(ctx);
  seriesPages(ctx);
  livePages(ctx);
  onlinePages(ctx);
});
