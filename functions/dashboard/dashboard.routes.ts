/**
 * @module The dashboard: server-rendered pages over the same view functions the API routes use
 * (functions/views), behind the same API_TOKEN through a session cookie. No build step, no
 * client framework: a few lines of script follow a running rollout over SSE.
 */
import { objects } from "../../src/runtime/objects";
import { Hono, type Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { BatchListQuery, seriesOf } from "../../src/schemas/batch-listing";
import type { AppEnv } from "../env";
import { SESSION_COOKIE, SESSION_TTL_MS, sessionValue } from "../middleware/dashboard-session";
import { sameSecret } from "../middleware/bearer-auth";
import { parseQuery } from "../middleware/problem-details";
import {
  batchDroppedGroups,
  batchEvalReport,
  batchIdParam,
  batchProgress,
  batchSummary,
  listBatches,
} from "../views/batch-views";
import { overviewView } from "../views/overview-view";
import { rolloutEvents, rolloutIdParam, rolloutsAcross, rolloutView } from "../views/rollout-views";
import { groupView, runView, seriesParam } from "../views/run-views";
import { layout, type Html } from "./layout";
import { batchPage } from "./pages/batch.page";
import { batchesPage } from "./pages/batches.page";
import { groupPage } from "./pages/group.page";
import { runPage } from "./pages/run.page";
import { loginPage } from "./pages/login.page";
import { overviewPage } from "./pages/overview.page";
import { contextTexts } from "./context-texts";
import {
  type ContextTextLookup,
  isLive,
  liveScript,
  rolloutBody,
  rolloutPage,
} from "./pages/rollout.page";
import { rolloutsPage, type RolloutFilters } from "./pages/rollouts.page";
import { onlineDashboardRoutes } from "./online-dashboard.routes";

type DashboardContext = Context<{ Bindings: AppEnv }>;

/** Swaps <main> for a fresh copy of the page every `ms` while `live` (no reload, scroll kept). */
function refreshScript(ms: number): string {
  return `setInterval(async () => { const r = await fetch(location.href, { credentials: "same-origin" }); if (!r.ok) return; const doc = new DOMParser().parseFromString(await r.text(), "text/html"); const fresh = doc.querySelector("main"); if (fresh) document.querySelector("main").innerHTML = fresh.innerHTML; }, ${ms});`;
}

function render(
  c: DashboardContext,
  title: string,
  body: Html,
  script?: string,
  signedIn = Boolean(c.env.API_TOKEN),
): Response | Promise<Response> {
  return c.html(layout(title, body, { signedIn, ...(script ? { script } : {}) }));
}

/** A local path to return to after login; anything else (another origin, `//host`) becomes `/`. */
function localPath(next: string | undefined): string {
  return next && next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\")
    ? next
    : "/";
}

/** Routes at the Worker's root: `/`, `/batches`, `/batches/:id`, `/rollouts`, `/rollouts/:id`, `/runs/:series`, `/groups/:uid`, `/online/…`, `/login`, `/logout`. */
export function dashboardRoutes(): Hono<{ Bindings: AppEnv }> {
  const routes = new Hono<{ Bindings: AppEnv }>();

  routes.get("/login", (c) =>
    render(c, "Log in", loginPage(localPath(c.req.query("next")), false), undefined, false),
  );
  routes.post("/login", async (c) => {
    const form = await c.req.parseBody();
    const next = localPath(typeof form.next === "string" ? form.next : undefined);
    const token = c.env.API_TOKEN;
    if (!token) return c.redirect(next, 303);
    if (typeof form.token !== "string" || !(await sameSecret(form.token, token))) {
      c.status(401);
      return render(c, "Log in", loginPage(next, true), undefined, false);
    }
    const secure = new URL(c.req.url).protocol === "https:";
    setCookie(c, SESSION_COOKIE, await sessionValue(token, Date.now() + SESSION_TTL_MS), {
      httpOnly: true,
      sameSite: "Strict",
      secure,
      path: "/",
      maxAge: SESSION_TTL_MS / 1000,
    });
    return c.redirect(next, 303);
  });
  routes.post("/logout", (c) => {
    if (getCookie(c, SESSION_COOKIE) !== undefined) deleteCookie(c, SESSION_COOKIE, { path: "/" });
    return c.redirect("/login", 303);
  });

  const pages = new Hono<{ Bindings: AppEnv }>();
  // Their credential (a session, or API_TOKEN) is checked before them: functions/credentials/.

  pages.get("/", async (c) =>
    render(c, "Overview", overviewPage(await overviewView(c.env), Date.now()), refreshScript(5000)),
  );

  pages.get("/batches", async (c) => {
    const raw = c.req.query();
    const query = parseQuery(raw, BatchListQuery);
    return render(
      c,
      "Batches",
      batchesPage(await listBatches(c.env, raw), {
        series: query.series,
        mode: query.mode,
        limit: query.limit,
      }),
    );
  });

  pages.get("/batches/:id", async (c) => {
    const batchId = batchIdParam(c.req.param("id"));
    const [progress, entry] = await Promise.all([
      batchProgress(c.env, batchId),
      objects(c.env).catalog().get(batchId),
    ]);
    const [summary, series, evaluation, dropped] = await Promise.all([
      batchSummary(c.env, batchId),
      listBatches(c.env, { series: entry?.series ?? seriesOf(batchId), limit: "50" }),
      progress.mode === "val" ? batchEvalReport(c.env, batchId, {}) : Promise.resolve(null),
      batchDroppedGroups(c.env, batchId),
    ]);
    return render(
      c,
      `Batch ${batchId}`,
      batchPage({
        progress,
        summary,
        series,
        evaluation,
        dropped: dropped.dropped_groups,
        now: Date.now(),
      }),
      progress.done ? undefined : refreshScript(5000),
    );
  });

  pages.post("/batches/:id/cancel", async (c) => {
    const batchId = batchIdParam(c.req.param("id"));
    await objects(c.env).batch(batchId).cancel();
    return c.redirect(`/batches/${encodeURIComponent(batchId)}`, 303);
  });

  pages.get("/rollouts", async (c) => {
    const raw = c.req.query();
    const filters: RolloutFilters = {
      batch: raw.batch ?? "",
      agent: raw.agent ?? "",
      status: raw.status ?? "",
      reason: raw.reason ?? "",
      data_source: raw.data_source ?? "",
      reward_min: raw.reward_min ?? "",
      reward_max: raw.reward_max ?? "",
    };
    const started = Date.now();
    const table = await rolloutsAcross(c.env, { ...raw, limit: raw.limit ?? "50" });
    return render(c, "Rollouts", rolloutsPage(table, filters, Date.now() - started));
  });

  pages.get("/rollouts/go", (c) =>
    c.redirect(
      `/rollouts/${encodeURIComponent(rolloutIdParam(c.req.query("id")?.trim() ?? ""))}`,
      303,
    ),
  );

  pages.get("/rollouts/:id", async (c) => {
    const view = await rolloutView(c.env, rolloutIdParam(c.req.param("id")));
    const server = { baseUrl: c.env.LLM_BASE_URL, apiKey: c.env.LLM_API_KEY };
    const lookup: ContextTextLookup = (samples, calls) => contextTexts(samples, calls, server);
    if (c.req.query("fragment")) return c.html(rolloutBody(view, lookup));
    return render(
      c,
      `Rollout ${view.rollout_id}`,
      rolloutPage(view, lookup),
      isLive(view) ? liveScript(view.rollout_id) : undefined,
    );
  });

  pages.get("/rollouts/:id/live", async (c) => {
    const stream = await rolloutEvents(
      c.env,
      rolloutIdParam(c.req.param("id")),
      c.req.header("last-event-id"),
      undefined,
    );
    return new Response(stream, {
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        "x-accel-buffering": "no",
      },
    });
  });

  pages.get("/runs/:series", async (c) => {
    const view = await runView(c.env, seriesParam(c.req.param("series")));
    return render(
      c,
      `Run ${view.series}`,
      runPage(view),
      view.steps.every((s) => s.progress?.done) ? undefined : refreshScript(5000),
    );
  });

  pages.get("/groups/:uid", async (c) => {
    const view = await groupView(c.env, c.req.param("uid"));
    return render(c, `Group ${view.uid}`, groupPage(view));
  });

  pages.route("/online", onlineDashboardRoutes());

  routes.route("/", pages);
  return routes;
}
