/**
 * @module Who may call a rollout's gateway: the rollout's own key, as `Authorization: Bearer`
 * (OpenAI clients, Codex, opencode) or as `x-api-key` (Anthropic clients: Claude Code sends its
 * `ANTHROPIC_API_KEY` there). Checked before the body is read, so a caller without the key learns
 * nothing from how its body is judged.
 */
import type { Context } from "hono";
import { NotFoundError, UnauthorizedError } from "../src/errors";
import { checkRolloutKey } from "../src/gateway";
import { RolloutId } from "../src/schemas/rollout-api";
import { type AppEnv, gatewaySecret } from "./env";

/** The key a request presents: the Bearer token, else `x-api-key`; null when neither. */
export function presentedKey(c: Context<{ Bindings: AppEnv }>): string | null {
  const bearer = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "");
  if (bearer) return bearer[1]!;
  const apiKey = c.req.header("x-api-key")?.trim();
  return apiKey ? apiKey : null;
}

/** Each request's check, once: the credential guard makes it, the route reads its answer. */
const checked = new WeakMap<Request, Promise<string>>();

/**
 * The rollout id in the path, once its key checked out: 401 forged or missing, 403 another
 * rollout's, 404 no such id. The credential guard checks every gateway route before it runs; a
 * route asking again gets the same answer without a second check.
 */
export function authorizeRollout(c: Context<{ Bindings: AppEnv }>): Promise<string> {
  let answer = checked.get(c.req.raw);
  if (!answer) {
    answer = checkRolloutRequest(c);
    checked.set(c.req.raw, answer);
  }
  return answer;
}

/**
 * The rollout id of a gateway path (`/v1/rollouts/<id>/…`), read from the path itself: the guard
 * runs before routing, where no route's parameters are known yet.
 */
function rolloutIdOf(path: string): string | undefined {
  const raw = /^\/v1\/rollouts\/([^/]+)\//.exec(path)?.[1];
  if (raw === undefined) return undefined;
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

async function checkRolloutRequest(c: Context<{ Bindings: AppEnv }>): Promise<string> {
  const parsed = RolloutId.safeParse(rolloutIdOf(c.req.path));
  if (!parsed.success) throw new NotFoundError("no such rollout");
  const key = presentedKey(c);
  if (key === null)
    throw new UnauthorizedError(
      "missing the rollout's api_key (Authorization: Bearer <key>, or x-api-key: <key>)",
      401,
    );
  const verdict = await checkRolloutKey(gatewaySecret(c.env), key, parsed.data);
  if (verdict === "invalid") throw new UnauthorizedError("invalid rollout api_key", 401);
  if (verdict === "other_rollout")
    throw new UnauthorizedError("this api_key belongs to another rollout", 403);
  return parsed.data;
}
