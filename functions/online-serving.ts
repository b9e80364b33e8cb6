/**
 * @module The serving configuration as the per-call path reads it, and a conversation's session
 * opened at its first call: both through caches of this isolate, so a model call reaches only its
 * session's own object. A conversation's first call in an isolate asks its application's object
 * for the session's version (assigned once, by the split then in force: sticky) and creates the
 * session's rollout; later calls go straight to the session.
 */
import type { Context } from "hono";
import { ConflictError, MisconfiguredError } from "../src/errors";
import { assignVersion, onlineRolloutId, onlineSessionSpec, TtlCache } from "../src/online";
import { objects } from "../src/runtime/objects";
import type { ServingConfig } from "../src/schemas/online";
import type { AppEnv } from "./env";
import type { OnlineCaller } from "./online-auth";

/** How long an isolate serves new sessions by a split it read: the longest a new split takes to apply. */
const SERVING_CACHE_MS = 2_000;
/** How long an isolate remembers a session it opened (a session deleted elsewhere is found gone within it). */
const OPENED_CACHE_MS = 30_000;

const serving = new TtlCache<ServingConfig>(SERVING_CACHE_MS);
const opened = new TtlCache<true>(OPENED_CACHE_MS);

/** The serving configuration, as this isolate last read it (at most SERVING_CACHE_MS ago). */
export function servingConfig(env: AppEnv): Promise<ServingConfig> {
  return serving.get("serving", () => objects(env).onlineControl().serving());
}

/** Forgets this isolate's serving configuration (after a change made here). */
export function forgetServing(): void {
  serving.forget("serving");
}

/** Forgets that this isolate opened `rolloutId` (after deleting it here). */
export function forgetOpened(rolloutId: string): void {
  opened.forget(rolloutId);
}

/**
 * The rollout id of `sessionId`, opened (once per isolate): its version assigned by the split in
 * force at its first call (or the one it already has), its rollout created. 503 while no version
 * is served; 409 once its feedback window has closed.
 */
export async function openedSession(
  c: Context<{ Bindings: AppEnv }>,
  caller: OnlineCaller,
  sessionId: string,
  promptKey: string | null,
): Promise<string> {
  const { appId, settings } = caller;
  const rolloutId = onlineRolloutId(appId, sessionId);
  await opened.get(rolloutId, async () => {
    const config = await servingConfig(c.env);
    if (Object.keys(config.versions).length === 0)
      throw new MisconfiguredError("no serving version is configured (PUT /v1/online/serving)");
    const proposed = assignVersion(appId, sessionId, config.weights);
    const { created, session, placement } = await objects(c.env)
      .onlineApp(appId)
      .openSession(appId, sessionId, proposed, promptKey, settings);
    if (session.status !== "open")
      throw new ConflictError(
        `session ${sessionId} is ${session.status}: its feedback window has closed`,
      );
    const version = config.versions[String(session.version)];
    // A session opened before whose version is no longer served already has its rollout.
    if (!version && !created) return true;
    if (!version)
      throw new MisconfiguredError(
        `version ${session.version} is not in the serving configuration`,
      );
    const spec = onlineSessionSpec({
      appId,
      sessionId,
      promptKey: session.prompt_key,
      version: session.version,
      serving: version,
      placement,
      settings,
      createdAt: session.created_at,
    });
    const result = await objects(c.env).session(rolloutId).create(spec);
    if (!result.ok) throw new ConflictError(result.message);
    return true;
  });
  return rolloutId;
}
