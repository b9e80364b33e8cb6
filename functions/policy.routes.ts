/** @module `/v1/policy` and `/v1/resources`: what the trainer controls, and named versioned resources. */
import { objects } from "../src/runtime/objects";
import { Hono } from "hono";
import { z } from "zod";
import { JsonValue } from "../src/schemas/json";
import { ResourceName } from "../src/schemas/policy";
import { ConflictError, InvalidInputError, NotFoundError } from "../src/errors";
import {
  PolicyUpdate,
  redactPolicy,
  restoreRedacted,
  SyncBeginRequest,
  SyncEndRequest,
} from "../src/runtime/policy";
import type { AppEnv } from "./env";
import { parseJsonBody } from "./middleware/problem-details";

/** Validates a path parameter with `schema`; a bad one is a 400 naming `path`. */
function pathParam<S extends z.ZodType>(raw: string, schema: S, path: string): z.infer<S> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const message = parsed.error.issues[0]?.message ?? "invalid";
    throw new InvalidInputError(`${path}: ${message}`, {
      status: 400,
      details: [{ path, message }],
    });
  }
  return parsed.data;
}

/** How long an `interrupt` sync waits for the calls it cut (and drained ones) when `wait_ms` is not given. */
const INTERRUPT_WAIT_MS = 30_000;

const VersionParam = z
  .string()
  .regex(/^[1-9][0-9]{0,8}$/, "version must be an integer >= 1")
  .transform(Number);

/** Routes under `/v1`: `/policy`, `/policy/sync/{begin,end}` and `/resources/:name`. */
export function policyRoutes(): Hono<{ Bindings: AppEnv }> {
  const routes = new Hono<{ Bindings: AppEnv }>();

  routes.get("/policy", async (c) =>
    c.json(redactPolicy(await objects(c.env).policy().snapshot())),
  );

  // Requests served by the policy object and each admission shard since they started (in memory):
  // how a benchmark shows that model calls never reach the deployment-wide object.
  routes.get("/policy/requests", async (c) => {
    const [policy, shards] = await Promise.all([
      objects(c.env).policy().requestCounts(),
      Promise.all(
        objects(c.env)
          .shards()
          .map((shard) => shard.requestCounts()),
      ),
    ]);
    return c.json({ policy, shards });
  });

  routes.put("/policy", async (c) => {
    const patch = await parseJsonBody(c, PolicyUpdate);
    const policy = objects(c.env).policy();
    if (patch.backend)
      patch.backend = restoreRedacted(patch.backend, (await policy.snapshot()).backend);
    const updated = await policy.update(patch);
    if (!updated.ok)
      throw new InvalidInputError(updated.errors.map((e) => `${e.path}: ${e.message}`).join("; "), {
        status: 422,
        details: updated.errors,
      });
    return c.json(redactPolicy(updated.policy));
  });

  routes.post("/policy/sync/begin", async (c) => {
    const body = await parseJsonBody(c, SyncBeginRequest, { emptyAsObject: true });
    const policy = objects(c.env).policy();
    const begun = await policy.beginSync(body.policy_version, body.mode);
    if (begun.conflict) {
      const why = `a "${begun.conflict}" weight sync is under way; an "interrupt" sync cannot begin until it ends (POST /v1/policy/sync/end)`;
      throw new ConflictError(why, { details: [{ path: "mode", message: why }] });
    }
    let inFlight = begun.in_flight;
    // An interrupt sync answers once no old-version generation runs: the cut calls release at once.
    const waitMs = body.wait_ms ?? (body.mode === "interrupt" ? INTERRUPT_WAIT_MS : undefined);
    if (waitMs !== undefined && inFlight > 0) inFlight = (await policy.waitIdle(waitMs)).in_flight;
    return c.json({
      policy_version: begun.policy_version,
      syncing: true,
      in_flight: inFlight,
      ...(body.mode ? { mode: body.mode } : {}),
    });
  });

  routes.post("/policy/sync/abort", async (c) => {
    const aborted = await objects(c.env).policy().abortSync();
    if (!aborted.ok) {
      const why = "no weight sync is under way (POST /v1/policy/sync/begin first)";
      throw new ConflictError(why, { details: [{ path: "(body)", message: why }] });
    }
    return c.json({ policy_version: aborted.policy_version, syncing: false });
  });

  routes.post("/policy/sync/end", async (c) => {
    const body = await parseJsonBody(c, SyncEndRequest);
    const ended = await objects(c.env).policy().endSync(body.policy_version);
    if (!ended.ok) {
      const why =
        ended.reason === "not_syncing"
          ? "no weight sync is under way (POST /v1/policy/sync/begin first)"
          : `policy_version must be greater than the current ${ended.policy_version}`;
      throw new ConflictError(why, { details: [{ path: "policy_version", message: why }] });
    }
    return c.json({
      policy_version: ended.policy_version,
      previous_version: ended.previous_version,
      syncing: false,
    });
  });

  routes.put("/resources/:name", async (c) => {
    const name = pathParam(c.req.param("name"), ResourceName, "name");
    const value = await parseJsonBody(c, JsonValue);
    const stored = await objects(c.env).policy().putResource(name, value);
    if (!stored.ok)
      throw new InvalidInputError(stored.errors.map((e) => `${e.path}: ${e.message}`).join("; "), {
        status: 422,
        details: stored.errors,
      });
    const { name: storedName, version, id } = stored;
    return c.json({ name: storedName, version, id }, 201, {
      location: `/v1/resources/${name}/versions/${version}`,
    });
  });

  routes.get("/resources/:name", async (c) => {
    const name = pathParam(c.req.param("name"), ResourceName, "name");
    const found = await objects(c.env).policy().getResource(name);
    if (!found.ok) throw new NotFoundError(`resource ${name} does not exist`);
    const { ok: _ok, ...record } = found;
    return c.json(record);
  });

  routes.get("/resources/:name/versions/:version", async (c) => {
    const name = pathParam(c.req.param("name"), ResourceName, "name");
    const version = pathParam(c.req.param("version"), VersionParam, "version");
    const found = await objects(c.env).policy().getResource(name, version);
    if (!found.ok) throw new NotFoundError(`resource ${name}@${version} does not exist`);
    const { ok: _ok, ...record } = found;
    return c.json(record);
  });

  return routes;
}
