/** @module The admin token (API_TOKEN): compared in constant time, required while it is set. */
import type { Context } from "hono";
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

/**
 * Requires `Authorization: Bearer <API_TOKEN>` when `API_TOKEN` is set; open otherwise (local
 * development). The credential guard (credential-guard.ts) calls it for every `admin` route.
 */
export async function requireAdminToken(c: Context<{ Bindings: AppEnv }>): Promise<void> {
  const expected = c.env.API_TOKEN;
  if (!expected) return;
  const match = /^Bearer\s+(.+)$/i.exec(c.req.header("authorization") ?? "");
  if (!match) throw new UnauthorizedError("missing Authorization: Bearer token", 401);
  if (!(await sameSecret(match[1]!, expected)))
    throw new UnauthorizedError("invalid bearer token", 401);
}
