/**
 * @module Who may call the online routes: an application key (`ero_<app_id>_<secret>`, as a
 * Bearer token or `x-api-key`), checked before the body is read, then the key's rate limit. The
 * key's record (its hash, whether revoked, its settings) is read from the online control object
 * through a cache of this isolate (KEY_CACHE_MS), so no call asks a deployment-wide object: a
 * revocation reaches other isolates within that time, this one at once.
 */
import type { Context } from "hono";
import { RateLimitedError, UnauthorizedError } from "../src/errors";
import { appIdOfKey, hashAppKey, RateLimiter, TtlCache } from "../src/online";
import { objects } from "../src/runtime/objects";
import type { AppKeyRecord } from "../src/runtime/online";
import type { AppId, AppSettings } from "../src/schemas/online";
import type { AppEnv } from "./env";
import { presentedKey } from "./gateway-auth";
import { sameSecret } from "./middleware/bearer-auth";

/** How long an isolate trusts a key record it read: the longest a revocation takes to reach it. */
const KEY_CACHE_MS = 5_000;

/** The application a request's key belongs to, and its settings. */
export interface OnlineCaller {
  appId: AppId;
  settings: AppSettings;
}

const records = new TtlCache<AppKeyRecord | null>(KEY_CACHE_MS);
const limiter = new RateLimiter();
/** Each request's check, once: the credential guard makes it, the route reads its answer. */
const checked = new WeakMap<Request, Promise<OnlineCaller>>();

/** Forgets this isolate's record of `appId` (after a revocation here, so it applies here at once). */
export function forgetAppKey(appId: string): void {
  records.forget(appId);
}

/**
 * The application whose key the request presents: 401 when missing, malformed, unknown or
 * revoked; 429 with Retry-After past the key's rate limit. Each request is checked once.
 */
export function authorizeApp(c: Context<{ Bindings: AppEnv }>): Promise<OnlineCaller> {
  let answer = checked.get(c.req.raw);
  if (!answer) {
    answer = checkApp(c);
    checked.set(c.req.raw, answer);
  }
  return answer;
}

async function checkApp(c: Context<{ Bindings: AppEnv }>): Promise<OnlineCaller> {
  const key = presentedKey(c);
  if (key === null)
    throw new UnauthorizedError(
      "missing the application key (Authorization: Bearer <key>, or x-api-key: <key>)",
    );
  const appId = appIdOfKey(key);
  if (appId === null) throw new UnauthorizedError("invalid application key");
  const record = await records.get(appId, () => objects(c.env).onlineControl().keyRecord(appId));
  if (!record || !(await sameSecret(await hashAppKey(key), record.key_hash)))
    throw new UnauthorizedError("invalid application key");
  if (record.revoked) throw new UnauthorizedError("this application key was revoked");
  const verdict = limiter.take(record.key_hash, record.settings.rate_limit);
  if (!verdict.ok) throw new RateLimitedError(verdict.retry_after_s);
  return { appId, settings: record.settings };
}
