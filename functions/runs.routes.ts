/** @module `/v1/runs/:series` (a training run's batches in step order) and `/v1/groups/:uid` (one GRPO group with verl's advantages). */
import { Hono } from "hono";
import type { AppEnv } from "./env";
import { groupView, runView, seriesParam } from "./views/run-views";

/** Routes mounted at `/v1`: `GET /runs/:series`, `GET /groups/:uid`. */
export function runsRoutes(): Hono<{ Bindings: AppEnv }> {
  const routes = new Hono<{ Bindings: AppEnv }>();
  routes.get("/runs/:series", async (c) =>
    c.json(await runView(c.env, seriesParam(c.req.param("series")))),
  );
  routes.get("/groups/:uid", async (c) => c.json(await groupView(c.env, c.req.param("uid"))));
  return routes;
}
