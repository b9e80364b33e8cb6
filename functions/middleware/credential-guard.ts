/**
 * @module The one check of who may call a route, before the route runs (so before any body is
 * read): the route's credential kind comes from functions/credentials/route-credentials.ts, and a
 * refusal is written in the shape the caller's API reads (problem+json, Anthropic's or OpenAI's).
 */
import type { Context, MiddlewareHandler } from "hono";
import { AppError, RateLimitedError } from "../../src/errors";
import { anthropicError } from "../../src/gateway/apis/messages";
import { openaiError } from "../../src/gateway/apis/responses";
import { type RefusalShape, credentialFor } from "../credentials/route-credentials";
import type { AppEnv } from "../env";
import { authorizeRollout } from "../gateway-auth";
import { authorizeApp } from "../online-auth";
import { requireAdminToken } from "./bearer-auth";
import { checkDashboard } from "./dashboard-session";

type AppContext = Context<{ Bindings: AppEnv }>;

/** A refusal in `shape`; problem+json refusals are thrown on to the app's error handler. */
function refusal(c: AppContext, shape: RefusalShape, error: unknown): Response {
  if (shape === "problem" || !(error instanceof AppError)) throw error;
  const answer =
    shape === "anthropic"
      ? anthropicError(error.status, error.message)
      : openaiError(error.status, error.message);
  return c.body(JSON.stringify(answer.body), answer.status as 401, {
    "content-type": "application/json",
    ...(error instanceof RateLimitedError
      ? { "retry-after": String(error.retryAfterSeconds) }
      : {}),
  });
}

/** Checks every request's credential by its route's line in the table. */
export function credentialGuard(): MiddlewareHandler<{ Bindings: AppEnv }> {
  return async function credentialGuardMiddleware(c, next) {
    const { kind, shape } = credentialFor(c.req.path);
    try {
      if (kind === "admin") await requireAdminToken(c);
      else if (kind === "rollout_key") await authorizeRollout(c);
      else if (kind === "app_key") await authorizeApp(c);
      else if (kind === "dashboard") {
        const redirect = await checkDashboard(c);
        if (redirect) return redirect;
      }
    } catch (error) {
      return refusal(c, shape, error);
    }
    await next();
  };
}
