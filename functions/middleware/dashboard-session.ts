/**
 * @module The dashboard's login: a form that takes API_TOKEN once and sets an HttpOnly session
 * cookie, so no secret ever appears in a URL and pages need no Authorization header. The cookie
 * holds an expiry and an HMAC of it keyed by API_TOKEN, never the token itself; rotating the
 * token logs every browser out.
 */
import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import { UnauthorizedError } from "../../src/errors";
import type { AppEnv } from "../env";
import { sameSecret } from "./bearer-auth";

/** The cookie's name. */
export const SESSION_COOKIE = "edge_rollout_session";
/** How long a login lasts: 12 hours. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

const encoder = new TextEncoder();

async function sign(secret: string, expires: number): Promise<string> {
  const key = await crypto.subtle.importKey(
    "raw",
    encoder.encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const mac = new Uint8Array(
    await crypto.subtle.sign("HMAC", key, encoder.encode(`dashboard-session:${expires}`)),
  );
  return btoa(String.fromCharCode(...mac))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** A session cookie value valid until `expires` (ms). */
export async function sessionValue(secret: string, expires: number): Promise<string> {
  return `${expires}.${await sign(secret, expires)}`;
}

/** Whether `value` is a session this deployment's API_TOKEN signed and that has not expired. */
export async function validSession(
  secret: string,
  value: string | undefined,
  now: number,
): Promise<boolean> {
  const match = value ? /^(\d{1,15})\.([A-Za-z0-9_-]{43})$/.exec(value) : null;
  if (!match) return false;
  const expires = Number(match[1]);
  if (expires <= now) return false;
  return sameSecret(match[2]!, await sign(secret, expires));
}

/** Whether the request carries a valid session cookie or `Authorization: Bearer <API_TOKEN>` (scripts). */
async function authorized(c: Context<{ Bindings: AppEnv }>, token: string): Promise<boolean> {
  if (await validSession(token, getCookie(c, SESSION_COOKIE), Date.now())) return true;
  const bearer = /^Bearer\s+(.+)$/i.exec(c.req.header("authorization") ?? "");
  return bearer !== null && (await sameSecret(bearer[1]!, token));
}

/**
 * The dashboard's credential: open when API_TOKEN is unset (as the API is), else a page request
 * without a valid session is sent to `/login` (a 303, answered here) and anything else is refused
 * 401. A POST from another origin is refused 403 (the cookie is SameSite=Strict as well). Null:
 * the request may go on. The credential guard calls it for every `dashboard` route.
 */
export async function checkDashboard(c: Context<{ Bindings: AppEnv }>): Promise<Response | null> {
  if (c.req.method !== "GET" && c.req.method !== "HEAD") {
    const origin = c.req.header("origin");
    if (origin && origin !== new URL(c.req.url).origin)
      throw new UnauthorizedError(`cross-origin ${c.req.method} refused`, 403);
  }
  const token = c.env.API_TOKEN;
  if (!token || (await authorized(c, token))) return null;
  if (c.req.method === "GET" && !c.req.path.endsWith("/live")) {
    const url = new URL(c.req.url);
    return c.redirect(`/login?next=${encodeURIComponent(url.pathname + url.search)}`, 303);
  }
  throw new UnauthorizedError("log in at /login first", 401);
}
