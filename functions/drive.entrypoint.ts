/**
 * @module The stateless drive route: `POST /drive/:id` advances one rollout as far as this
 * invocation may. Reached only through the `DRIVER` service binding (a named entrypoint, not the
 * public router), from the rollout's own session alarm.
 */
import { WorkerEntrypoint } from "cloudflare:workers";
import { Hono } from "hono";
import { NotFoundError } from "../src/errors";
import { driveRollout } from "../src/runtime/driver";
import { RolloutId } from "../src/schemas/rollout-api";
import { driverDeps } from "./driver-deps";
import type { AppEnv } from "./env";
import { problemResponse } from "./middleware/problem-details";

/** The drive app: one route, problem+json errors. */
function createDriveApp(): Hono<{ Bindings: AppEnv }> {
  const app = new Hono<{ Bindings: AppEnv }>();
  app.onError((error, c) => problemResponse(c, error));
  app.notFound((c) =>
    problemResponse(
      c,
      new NotFoundError(`no route for ${c.req.method} ${new URL(c.req.url).pathname}`),
    ),
  );
  app.post("/drive/:id", async (c) => {
    const id = RolloutId.safeParse(c.req.param("id"));
    if (!id.success) throw new NotFoundError("no such rollout");
    // One rollout per invocation: its model calls use this invocation's connections, and its
    // lease makes it the only driver; the outcome is for logs (the state is in the session).
    return c.json(await driveRollout(driverDeps(c.env), id.data));
  });
  return app;
}

const driveApp = createDriveApp();

/** The named entrypoint the `DRIVER` service binding points at. */
export class RolloutDriver extends WorkerEntrypoint<AppEnv> {
  override fetch(request: Request): Promise<Response> {
    return Promise.resolve(driveApp.fetch(request, this.env, this.ctx));
  }
}
