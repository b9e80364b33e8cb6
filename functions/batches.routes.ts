/** @module `/v1/batches`: start a batch of rollouts over dataset rows, follow its progress, cancel it. */
import { objects } from "../src/runtime/objects";
import { Hono } from "hono";
import { ConflictError, InvalidInputError, NotFoundError } from "../src/errors";
import { startBatch, type BatchIssue, type SubmitResult } from "../src/runtime/batch";
import {
  BATCH_MESSAGE_SCHEMA_VERSION,
  CreateBatchRequest,
  type BatchMessage,
} from "../src/schemas/batch";
import type { AppEnv } from "./env";
import { parseJsonBody } from "./middleware/problem-details";
import { TrainerReport } from "../src/schemas/run-view";
import {
  batchDroppedGroups,
  batchEvalReport,
  batchIdParam,
  batchProgress,
  batchRolloutsPage,
  batchSummary,
  listBatches,
} from "./views/batch-views";

/**
 * Largest `POST /v1/batches` body: the rows go to the batch's Durable Object in one RPC (arguments
 * capped at 32 MiB) and are parsed in a 128 MB isolate; the CLI splits datasets into 24 MiB bodies.
 * Each row's task is checked against the ~2 MB SQLite value limit separately (MAX_ROW_TASK_BYTES).
 */
export const MAX_BATCH_BODY_BYTES = 25 * 1024 * 1024;

/** The HTTP error for a refused submit. */
function submitError(refused: Exclude<SubmitResult, { ok: true }>): Error {
  if (refused.reason === "conflict")
    return new ConflictError(refused.message, {
      details: [{ path: "batch_id", message: refused.message }],
    });
  const errors: BatchIssue[] = refused.errors;
  return new InvalidInputError(errors.map((e) => `${e.path}: ${e.message}`).join("; "), {
    status: 422,
    details: errors,
  });
}

/** Routes under `/v1/batches`. */
export function batchesRoutes(): Hono<{ Bindings: AppEnv }> {
  const routes = new Hono<{ Bindings: AppEnv }>();

  routes.post("/", async (c) => {
    const body = await parseJsonBody(c, CreateBatchRequest, { maxBytes: MAX_BATCH_BODY_BYTES });
    const message: BatchMessage = {
      ...body,
      schema_version: BATCH_MESSAGE_SCHEMA_VERSION,
      batch_id: body.batch_id ?? crypto.randomUUID(),
    };
    const started = await startBatch(objects(c.env), message);
    if (!started.ok) throw submitError(started);
    const { progress } = started;
    const links = {
      self: `/v1/batches/${progress.batch_id}`,
      rollouts: `/v1/batches/${progress.batch_id}/rollouts`,
      cancel: `/v1/batches/${progress.batch_id}/cancel`,
    };
    return c.json(
      {
        batch_id: progress.batch_id,
        rollouts: progress.rollouts,
        status: progress.status,
        created: started.created,
        progress,
        links,
      },
      started.created ? 202 : 200,
    );
  });

  routes.get("/", async (c) => c.json({ batches: await listBatches(c.env, c.req.query()) }));

  routes.get("/:id", async (c) =>
    c.json(await batchProgress(c.env, batchIdParam(c.req.param("id")))),
  );

  routes.get("/:id/rollouts", async (c) => {
    const batchId = batchIdParam(c.req.param("id"));
    return c.json({
      batch_id: batchId,
      ...(await batchRolloutsPage(c.env, batchId, c.req.query())),
    });
  });

  // The tracker's own request counters (benches count its requests per rollout with them).
  routes.get("/:id/requests", async (c) =>
    c.json(
      await objects(c.env)
        .batch(batchIdParam(c.req.param("id")))
        .requestCounts(),
    ),
  );

  routes.get("/:id/summary", async (c) =>
    c.json(await batchSummary(c.env, batchIdParam(c.req.param("id")))),
  );

  // Read only: a group is dropped by the pull that finds it stale, and this lists what was dropped.
  routes.get("/:id/dropped-groups", async (c) =>
    c.json(await batchDroppedGroups(c.env, batchIdParam(c.req.param("id")))),
  );

  routes.get("/:id/eval", async (c) =>
    c.json(await batchEvalReport(c.env, batchIdParam(c.req.param("id")), c.req.query())),
  );

  routes.put("/:id/trainer-report", async (c) => {
    const id = batchIdParam(c.req.param("id"));
    const body = await parseJsonBody(c, TrainerReport);
    const stored = await objects(c.env).batch(id).reportTrainer(body);
    if (!stored) throw new NotFoundError(`no batch ${id}`);
    if ("invalid" in stored)
      throw new InvalidInputError(stored.invalid.map((e) => `${e.path}: ${e.message}`).join("; "), {
        status: 422,
        details: stored.invalid,
      });
    return c.json({ batch_id: id, trainer: body });
  });

  routes.post("/:id/cancel", async (c) => {
    const batchId = batchIdParam(c.req.param("id"));
    const cancelled = await objects(c.env).batch(batchId).cancel();
    if (!cancelled.ok) throw new NotFoundError(`batch ${batchId} does not exist`);
    return c.json(cancelled.progress);
  });

  return routes;
}
