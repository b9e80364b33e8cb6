/**
 * @module Online serving's admin routes (the admin token, docs/online.md): applications and their
 * keys (created with the key shown once, listed, revoked), the serving versions (each mapped to a
 * replica pool), and the traffic split between them.
 */
import { Hono } from "hono";
import { InvalidInputError, NotFoundError } from "../src/errors";
import { backendRegistry, defaultBackendDeps, resolveBackend } from "../src/gateway/backends";
import { objects } from "../src/runtime/objects";
import type { ServingChange } from "../src/runtime/online";
import {
  AppId,
  CreateAppRequest,
  GuardConfig,
  ServingConfigRequest,
  SplitRequest,
} from "../src/schemas/online";
import type { AppEnv } from "./env";
import { parseJsonBody } from "./middleware/problem-details";
import { forgetAppKey } from "./online-auth";
import { forgetServing } from "./online-serving";

/** A serving change's answer: the configuration, or 422 naming the fields at fault. */
function changed(result: ServingChange) {
  if (!result.ok)
    throw new InvalidInputError(result.errors.map((e) => `${e.path}: ${e.message}`).join("; "), {
      status: 422,
      details: result.errors,
    });
  forgetServing();
  return result.serving;
}

/** Each version's backend config checked by its backend's own schema: 422 naming `versions.<v>.backend…`. */
function checkBackends(input: ServingConfigRequest): void {
  for (const [version, served] of Object.entries(input.versions)) {
    try {
      resolveBackend(backendRegistry, served.backend, defaultBackendDeps);
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      const details = (Array.isArray(error.details) ? error.details : []) as Array<{
        path: string;
        message: string;
      }>;
      const named = details.map((d) => ({
        path: `versions.${version}.${d.path}`,
        message: d.message,
      }));
      throw new InvalidInputError(`versions.${version}: ${error.message}`, {
        status: 422,
        details: named,
      });
    }
  }
}

/** Routes mounted at `/v1/online` for the deployment's admin. */
export function onlineAdminRoutes(): Hono<{ Bindings: AppEnv }> {
  const routes = new Hono<{ Bindings: AppEnv }>();

  routes.post("/apps", async (c) => {
    const input = await parseJsonBody(c, CreateAppRequest);
    const created = await objects(c.env).onlineControl().createApp(input);
    forgetAppKey(created.app.app_id);
    return c.json(created, 201);
  });

  routes.get("/apps", async (c) =>
    c.json({ apps: await objects(c.env).onlineControl().listApps() }),
  );

  routes.delete("/apps/:id", async (c) => {
    const appId = AppId.safeParse(c.req.param("id"));
    const app = appId.success ? await objects(c.env).onlineControl().revokeApp(appId.data) : null;
    if (!app) throw new NotFoundError("no such application");
    forgetAppKey(app.app_id);
    return c.json(app);
  });

  routes.get("/serving", async (c) => c.json(await objects(c.env).onlineControl().serving()));

  routes.put("/serving", async (c) => {
    const input = await parseJsonBody(c, ServingConfigRequest);
    checkBackends(input);
    return c.json(changed(await objects(c.env).onlineControl().setServing(input)));
  });

  routes.put("/split", async (c) => {
    const { weights } = await parseJsonBody(c, SplitRequest);
    return c.json(changed(await objects(c.env).onlineControl().setSplit(weights)));
  });

  routes.get("/guard", async (c) => c.json(await objects(c.env).onlineControl().guard()));

  routes.put("/guard", async (c) => {
    const config = await parseJsonBody(c, GuardConfig);
    const served = Object.keys((await objects(c.env).onlineControl().serving()).versions);
    if (config.stable !== null && !served.includes(config.stable))
      throw new InvalidInputError(
        `stable: version ${config.stable} is not in the serving configuration`,
        {
          status: 422,
          details: [{ path: "stable", message: "not in the serving configuration" }],
        },
      );
    return c.json(await objects(c.env).onlineControl().setGuard(config));
  });

  return routes;
}
