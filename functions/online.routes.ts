/**
 * @module An application's online routes (docs/online.md), each with its application key
 * (functions/online-auth.ts, checked by the credential guard before any body is read): the
 * OpenAI-compatible chat endpoint whose calls are recorded token-exact in the conversation's
 * session, and the application's sessions: read, fed back to, deleted. An application reaches only
 * its own sessions (their ids are under its app id), so another's session is 404.
 */
import { Hono, type Context } from "hono";
import { InvalidInputError, NotFoundError, ConflictError } from "../src/errors";
import { onlineRolloutId } from "../src/online";
import { objects } from "../src/runtime/objects";
import { GatewayChatRequest } from "../src/schemas/gateway-requests";
import type { JsonObject } from "../src/schemas/json";
import {
  type AppId,
  type FeedbackEvent,
  FeedbackRequest,
  ONLINE_SESSION_HEADER,
  OnlineSessionId,
  type OnlineSessionView,
  PROMPT_KEY_HEADER,
  PromptKey,
} from "../src/schemas/online";
import type { AppEnv } from "./env";
import { forward } from "./gateway.routes";
import { MAX_GATEWAY_BODY_BYTES } from "./gateway-limits";
import { parseJsonBody } from "./middleware/problem-details";
import { authorizeApp } from "./online-auth";
import { forgetOpened, openedSession, servingConfig } from "./online-serving";

type OnlineContext = Context<{ Bindings: AppEnv }>;

/** A header's value checked by `schema`: 400 naming the header when it is malformed (or missing and required). */
function headerOf(
  c: OnlineContext,
  name: string,
  schema: typeof OnlineSessionId,
  required: boolean,
): string | null {
  const raw = c.req.header(name);
  if (raw === undefined) {
    if (!required) return null;
    throw new InvalidInputError(
      `${name} is required: it names the conversation this call belongs to`,
      {
        status: 400,
        details: [{ path: name, message: "required" }],
      },
    );
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const message = parsed.error.issues[0]?.message ?? "invalid";
    throw new InvalidInputError(`${name}: ${message}`, {
      status: 400,
      details: [{ path: name, message }],
    });
  }
  return parsed.data;
}

/** The session id in the path: one of the caller's sessions, else 404 (a malformed id names none). */
function sessionIdOf(c: OnlineContext): string {
  const parsed = OnlineSessionId.safeParse(c.req.param("id"));
  if (!parsed.success) throw new NotFoundError("no such session");
  return parsed.data;
}

/** Records `event` on the session: 404 when it is not the application's, 409 once its feedback window has closed. */
export async function addFeedback(
  env: AppEnv,
  appId: AppId,
  sessionId: string,
  event: Omit<FeedbackEvent, "at">,
): Promise<OnlineSessionView> {
  const result = await objects(env).onlineApp(appId).addFeedback(appId, sessionId, event);
  if (result.ok) return result.session;
  if (result.reason === "not_found") throw new NotFoundError("no such session");
  throw new ConflictError(
    `session ${sessionId} is ${result.status}: its feedback window has closed`,
  );
}

/** Routes mounted at `/v1/online` for applications. */
export function onlineRoutes(): Hono<{ Bindings: AppEnv }> {
  const routes = new Hono<{ Bindings: AppEnv }>();

  routes.post("/chat/completions", async (c) => {
    const caller = await authorizeApp(c);
    const sessionId = headerOf(c, ONLINE_SESSION_HEADER, OnlineSessionId, true)!;
    const promptKey = headerOf(c, PROMPT_KEY_HEADER, PromptKey, false);
    const body = (await parseJsonBody(c, GatewayChatRequest, {
      maxBytes: MAX_GATEWAY_BODY_BYTES,
    })) as JsonObject;
    const rolloutId = await openedSession(c, caller, sessionId, promptKey);
    return forward(c, rolloutId, "/chat/completions", body);
  });

  routes.get("/models", async (c) => {
    await authorizeApp(c);
    const config = await servingConfig(c.env);
    const models = new Set(Object.values(config.versions).map((v) => v.model ?? c.env.LLM_MODEL));
    return c.json({
      object: "list",
      data: [...models].map((id) => ({
        id,
        object: "model",
        created: 0,
        owned_by: "edge-rollout",
      })),
    });
  });

  routes.get("/sessions", async (c) => {
    const { appId } = await authorizeApp(c);
    const limit = Math.min(1000, Math.max(1, Number(c.req.query("limit") ?? 100) || 100));
    return c.json({ sessions: await objects(c.env).onlineApp(appId).listSessions(appId, limit) });
  });

  routes.get("/sessions/:id", async (c) => {
    const { appId } = await authorizeApp(c);
    const sessionId = sessionIdOf(c);
    const session = await objects(c.env).onlineApp(appId).session(appId, sessionId);
    if (!session) throw new NotFoundError("no such session");
    const rollout = await objects(c.env).session(onlineRolloutId(appId, sessionId)).read();
    return c.json({ ...session, llm_calls: rollout?.llm_calls ?? [] });
  });

  routes.post("/sessions/:id/feedback", async (c) => {
    const { appId } = await authorizeApp(c);
    const sessionId = sessionIdOf(c);
    const event = await parseJsonBody(c, FeedbackRequest);
    const session = await addFeedback(c.env, appId, sessionId, {
      reward: event.reward,
      label: event.label ?? null,
      source: event.source,
    });
    return c.json(session, 201);
  });

  routes.delete("/sessions/:id", async (c) => {
    const { appId } = await authorizeApp(c);
    const sessionId = sessionIdOf(c);
    if (!(await objects(c.env).onlineApp(appId).deleteSession(appId, sessionId)))
      throw new NotFoundError("no such session");
    forgetOpened(onlineRolloutId(appId, sessionId));
    return c.body(null, 204);
  });

  return routes;
}
