/** @module The Hono application: middleware, routes and error rendering. */
import { objects } from "../src/runtime/objects";
import { Hono } from "hono";
import { NotFoundError } from "../src/errors";
import { agentRegistry } from "../src/sdk";
import type { AppEnv } from "./env";
import { batchesRoutes } from "./batches.routes";
import { dashboardRoutes } from "./dashboard/dashboard.routes";
import { credentialGuard } from "./middleware/credential-guard";
import { deploymentGuard } from "./middleware/deployment-guard";
import { problemResponse } from "./middleware/problem-details";
import { feedRoutes } from "./feed.routes";
import { gatewayRoutes } from "./gateway.routes";
import { policyRoutes } from "./policy.routes";
import { pressureRoutes } from "./pressure.routes";
import { rolloutsRoutes } from "./rollouts.routes";
import { forkRoutes } from "./fork.routes";
import { attemptsRoutes } from "./attempts.routes";
import { runnersRoutes } from "./runners.routes";
import { runsRoutes } from "./runs.routes";
import { onlineAdminRoutes } from "./online-admin.routes";
import { onlineRoutes } from "./online.routes";
import { backendsView } from "./views/overview-view";

/** Builds the HTTP API. Every error, including 404 for unknown routes, is problem+json. */
export function createApp(): Hono<{ Bindings: AppEnv }> {
  const app = new Hono<{ Bindings: AppEnv }>();
  app.onError((error, c) => problemResponse(c, error));
  app.notFound((c) =>
    problemResponse(
      c,
      new NotFoundError(`no route for ${c.req.method} ${new URL(c.req.url).pathname}`),
    ),
  );
  app.get("/health", (c) => c.json({ ok: true }));
  // The dashboard pages too: they show (and cancel) the same data as the API. /health stays open.
  app.use("*", deploymentGuard());
  // Every route's credential (functions/credentials/route-credentials.ts), before the route reads anything.
  app.use("*", credentialGuard());
  app.get("/v1/agents", (c) => c.json({ agents: agentRegistry.names() }));
  app.route("/v1/rollouts/:id/llm/v1", gatewayRoutes());
  app.route("/v1/rollouts/:id/attempts/:attempt/llm/v1", gatewayRoutes());
  app.route("/v1/rollouts/:id/attempts/:attempt", attemptsRoutes());
  app.route("/v1/rollouts/:id/fork", forkRoutes());
  app.route("/v1/runners", runnersRoutes());
  app.route("/v1/rollouts", rolloutsRoutes());
  app.route("/v1", policyRoutes());
  app.route("/v1", pressureRoutes());
  app.route("/v1/batches", batchesRoutes());
  app.route("/v1/feed", feedRoutes());
  app.route("/v1/online", onlineRoutes());
  app.route("/v1/online", onlineAdminRoutes());
  app.route("/v1", runsRoutes());
  app.route("/", dashboardRoutes());
  app.get("/v1/backends", async (c) =>
    c.json(backendsView(c.env, await objects(c.env).policy().snapshot())),
  );
  return app;
}
