/**
 * @module The dashboard's online pages (docs/dashboard.md): the applications, one application's
 * split, sessions and rewards per version with the split guard, and its playground. The
 * playground's calls come back here under the dashboard session and are made on the server (the
 * page never holds the admin token or an application key): a chat turn goes through the same
 * session opening and gateway call as `/v1/online/chat/completions`, a rating becomes feedback with
 * source `playground`.
 */
import { Hono, type Context } from "hono";
import { ConflictError, NotFoundError } from "../../src/errors";
import { objects } from "../../src/runtime/objects";
import type { JsonObject } from "../../src/schemas/json";
import {
  PLAYGROUND_SOURCE,
  PlaygroundChatRequest,
  PlaygroundRating,
} from "../../src/schemas/online-playground";
import type { AppEnv } from "../env";
import { forward } from "../gateway.routes";
import { MAX_GATEWAY_BODY_BYTES } from "../gateway-limits";
import { parseJsonBody } from "../middleware/problem-details";
import type { OnlineCaller } from "../online-auth";
import { openedSession } from "../online-serving";
import { addFeedback } from "../online.routes";
import { appIdParam, onlineApp, onlineAppsView, onlineAppView } from "../views/online-views";
import { layout, type Html } from "./layout";
import { onlineAppPage, onlineAppsPage } from "./pages/online-app.page";
import { playgroundPage, playgroundScript } from "./pages/playground.page";

type OnlineContext = Context<{ Bindings: AppEnv }>;

function render(c: OnlineContext, title: string, body: Html, script?: string) {
  return c.html(
    layout(title, body, { signedIn: Boolean(c.env.API_TOKEN), ...(script ? { script } : {}) }),
  );
}

/** The application in the path as a caller of its own routes: 404 when unknown, 409 once its key is revoked. */
async function playgroundCaller(c: OnlineContext): Promise<OnlineCaller> {
  const appId = appIdParam(c.req.param("app"));
  const record = await objects(c.env).onlineControl().keyRecord(appId);
  if (!record) throw new NotFoundError(`no application ${appId}`);
  if (record.revoked) throw new ConflictError(`application ${appId} is revoked`);
  return { appId, settings: record.settings };
}

/** Routes mounted at `/online` among the dashboard's pages (their credential is the dashboard's). */
export function onlineDashboardRoutes(): Hono<{ Bindings: AppEnv }> {
  const routes = new Hono<{ Bindings: AppEnv }>();

  routes.get("/", async (c) =>
    render(c, "Online applications", onlineAppsPage(await onlineAppsView(c.env))),
  );

  routes.get("/:app", async (c) => {
    const view = await onlineAppView(c.env, appIdParam(c.req.param("app")));
    return render(c, `Online · ${view.app.name}`, onlineAppPage(view, Date.now()));
  });

  routes.get("/:app/playground", async (c) => {
    const app = await onlineApp(c.env, appIdParam(c.req.param("app")));
    return render(c, `Playground · ${app.name}`, playgroundPage(app), playgroundScript(app.app_id));
  });

  routes.post("/:app/playground/chat", async (c) => {
    const caller = await playgroundCaller(c);
    const input = await parseJsonBody(c, PlaygroundChatRequest, {
      maxBytes: MAX_GATEWAY_BODY_BYTES,
    });
    const rolloutId = await openedSession(c, caller, input.session_id, null);
    const body: JsonObject = { messages: input.messages, max_tokens: input.max_tokens };
    return forward(c, rolloutId, "/chat/completions", body);
  });

  routes.post("/:app/playground/feedback", async (c) => {
    const { appId } = await playgroundCaller(c);
    const { session_id, rating } = await parseJsonBody(c, PlaygroundRating);
    const session = await addFeedback(c.env, appId, session_id, {
      reward: rating === "up" ? 1 : 0,
      label: rating === "up" ? "thumbs_up" : "thumbs_down",
      source: PLAYGROUND_SOURCE,
    });
    return c.json(session, 201);
  });

  return routes;
}
