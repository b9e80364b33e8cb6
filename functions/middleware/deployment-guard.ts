/** @module Refusing to run a deployment open: the secrets it needs, checked on every API request. */
import type { MiddlewareHandler } from "hono";
import { InsecureDeploymentError } from "../../src/errors";
import { type AppEnv, isInProcessCall, isLocalDevelopment, missingSecrets } from "../env";

/** Response header that carries the warning while a deployment runs open on purpose. */
export const INSECURE_WARNING_HEADER = "x-edge-rollout-warning";

/**
 * Outside local development, every request but /health (the API and the dashboard) needs both secrets set: `API_TOKEN` (callers)
 * and `GATEWAY_SECRET` (rollout keys). Without them the API would be open and every rollout key
 * forgeable from a string in this repository, so the request is refused with a 503 that says
 * what to set. `ALLOW_OPEN_ACCESS=true` runs open anyway, for deployments guarded some other way
 * (Cloudflare Access, a private network), and then warns on every request: in the log and in a
 * response header. An in-Worker agent's in-process call to its gateway is let through: the
 * request that created its rollout already passed here (or came from the batches queue).
 */
export function deploymentGuard(): MiddlewareHandler<{ Bindings: AppEnv }> {
  return async function deploymentGuardMiddleware(c, next) {
    const missing = missingSecrets(c.env);
    if (missing.length === 0 || isLocalDevelopment(c.env, c.req.url) || isInProcessCall(c.req.url))
      return next();
    const what = `this deployment has no ${missing.join(" and no ")} secret`;
    if (c.env.ALLOW_OPEN_ACCESS !== "true") {
      throw new InsecureDeploymentError(
        `${what}: it refuses requests rather than run open. Set it with \`wrangler secret put ${missing[0]}\` (see README, Secrets), or set ALLOW_OPEN_ACCESS=true if access is guarded another way.`,
      );
    }
    const warning = `${what}; ALLOW_OPEN_ACCESS=true runs it open${missing.includes("GATEWAY_SECRET") ? " and rollout keys are forgeable" : ""}`;
    console.warn(`INSECURE DEPLOYMENT: ${warning}`, { path: new URL(c.req.url).pathname });
    await next();
    c.res = new Response(c.res.body, c.res);
    c.res.headers.set(INSECURE_WARNING_HEADER, warning);
  };
}
