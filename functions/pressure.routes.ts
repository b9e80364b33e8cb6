/** @module `/v1/policy/pressure`: concurrency that follows the replicas' KV pressure (src/runtime/pressure). */
import { Hono } from "hono";
import { InvalidInputError } from "../src/errors";
import { objects } from "../src/runtime/objects";
import { PressureUpdate } from "../src/schemas/pressure";
import type { AppEnv } from "./env";
import { parseJsonBody } from "./middleware/problem-details";

/** Routes under `/v1`: `GET /policy/pressure` (config, budget, last sample, shares) and `PUT` (merge a config patch). */
export function pressureRoutes(): Hono<{ Bindings: AppEnv }> {
  const routes = new Hono<{ Bindings: AppEnv }>();

  routes.get("/policy/pressure", async (c) => c.json(await objects(c.env).policy().pressure()));

  routes.put("/policy/pressure", async (c) => {
    // Field types here (400 naming the field); relations between fields in the object (422).
    const patch = await parseJsonBody(c, PressureUpdate);
    const updated = await objects(c.env).policy().configurePressure(patch);
    if (!updated.ok)
      throw new InvalidInputError(updated.errors.map((e) => `${e.path}: ${e.message}`).join("; "), {
        status: 422,
        details: updated.errors,
      });
    return c.json(updated.view);
  });

  return routes;
}
