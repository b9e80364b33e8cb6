/** @module Optional bearer-token auth: on when the API_TOKEN secret is set. */
import type { MiddlewareHandler } from "hono";
import { UnauthorizedError } from "../../src/errors";
import type { AppEnv } from "../env";

const encoder = new TextEncoder();

/** Compares secrets in time independent of where they first differ. */
export async function sameSecret(given: string, expected: string): Promise<boolean> {
  const [a, b] = await Promise.all([
    crypto.subtle.digest("SHA-256", encoder.encode(given)),
    crypto.subtle.digest("SHA-256", encoder.encode(expected)),
  ]);
  const left = new Uint8Array(a);
  const right = new Uint8Array(b);
  let diff = 0;
  for (let i = 0; i < left.length; i++) diff |= left[i]! ^ right[i]!;
  return diff === 0;
}

/** A rollout's gateway (`/v1/rollouts/:id/llm/…`, `/v1/rollouts/:id/attempts/:n/llm/…`) takes that rollout's own key instead of API_TOKEN. */
const ROLLOUT_GATEWAY_PATH = /^\/v1\/rollouts\/[^/]+\/(attempts\/[^/]+\/)?llm(\/|$)/;

/**
 * Requires `Authorization: Bearer <API_TOKEN>` on every route when `API_TOKEN` is set; open
 * otherwise. Rollout gateway routes are left to their own per-rollout key check.
 */
export function bearerAuth(): MiddlewareHandler<{ Bindings: AppEnv }> {
  return async function bearerAuthMiddleware(c, next) {
    const expected = c.env.API_TOKEN;
    if (expected && !ROLLOUT_GATEWAY_PATH.test(c.req.path)) {
      const header = c.req.header("authorization") ?? "";
      const match = /^Bearer\s+(.+)$/i.exec(header);
      if (!match) throw new UnauthorizedError("missing Authorization: Bearer token", 401);
      if (!(await sameSecret(match[1]!, expected)))
        throw new UnauthorizedError("invalid bearer token", 401);
    }
    await next();
  };
}
