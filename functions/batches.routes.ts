/** @module `/v1/batches`: start a batch of rollouts over dataset rows, follow its progress, cancel it. */
import { Hono } from "hono";
import { z } from "zod";
import { ConflictError, InvalidInputError, NotFoundError } from "../src/errors";
import type { BatchIssue, SubmitResult } from "../src/runtime/batch/batch-results";
import { BATCH_MESSAGE_SCHEMA_VERSION, BatchId, CreateBatchRequest, type BatchMessage } from "../src/schemas/batch";
import { startBatch, batchStub } from "./batch-stub";
import type { AppEnv } from "./env";
import { parseJsonBody } from "./middleware/problem-details";

/** Validates the `:id` path parameter. */
function batchIdParam(raw: string): string {
  const parsed = BatchId.safeParse(raw);
  if (!parsed.success) {
    const message = parsed.error.issues[0]?.message ?? "invalid";
    throw new InvalidInputError(`batch_id: ${message}`, { status: 400, details: [{ path: "batch_id", message }] });
  }
  return parsed.data;
}

const Paging = z.object({
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});

/** The HTTP error for a refused submit. */
function submitError(refused: Exclude<SubmitResult, { ok: true }>): Error {
  if (refused.reason === "conflict") return new ConflictError(refused.message, { details: [{ path: "batch_id", message: refused.message }] });
  const errors: BatchIssue[] = refused.errors;
  return new InvalidInputError(errors.map((e) => `${e.path}: ${e.message}`).join("; "), { status: 422, details: errors });
}

/** Routes under `/v1/batches`. */
export function batchesRoutes(): Hono<{ Bindings: AppEnv }> {
  const routes = new Hono<{ Bindings: AppEnv }>();

  routes.post("/", async (c) => {
    const body = await parseJsonBody(c, CreateBatchRequest);
    const message: BatchMessage = { ...body, schema_version: BATCH_MESSAGE_SCHEMA_VERSION, batch_id: body.batch_id ?? crypto.randomUUID() };
    const started = await startBatch(c.env, message);
    if (!started.ok) throw submitError(started);
    const { progress } = started;
    const links = { self: `/v1/batches/${progress.batch_id}`, rollouts: `/v1/batches/${progress.batch_id}/rollouts`, cancel: `/v1/batches/${progress.batch_id}/cancel` };
    return c.json(
      { batch_id: progress.batch_id, rollouts: progress.rollouts, status: progress.status, created: started.created, progress, links },
      started.created ? 202 : 200,
    );
  });

  routes.get("/:id", async (c) => {
    const batchId = batchIdParam(c.req.param("id"));
    const stub = batchStub(c.env, batchId);
    const [progress, runners] = await Promise.all([stub.progress(), stub.runners()]);
    if (!progress) throw new NotFoundError(`batch ${batchId} does not exist`);
    // Runners that claimed this batch's external rollouts (empty for driven batches).
    return c.json({ ...progress, runners });
  });

  routes.get("/:id/rollouts", async (c) => {
    const batchId = batchIdParam(c.req.param("id"));
    const paging = Paging.safeParse(c.req.query());
    if (!paging.success) throw new InvalidInputError("offset and limit must be integers (limit 1..1000)", { status: 400, details: paging.error.issues.map((i) => ({ path: i.path.join("."), message: i.message })) });
    const rollouts = await batchStub(c.env, batchId).rollouts(paging.data.offset, paging.data.limit);
    if (!rollouts) throw new NotFoundError(`batch ${batchId} does not exist`);
    return c.json({ batch_id: batchId, offset: paging.data.offset, rollouts });
  });

  routes.post("/:id/cancel", async (c) => {
    const batchId = batchIdParam(c.req.param("id"));
    const cancelled = await batchStub(c.env, batchId).cancel();
    if (!cancelled.ok) throw new NotFoundError(`batch ${batchId} does not exist`);
    return c.json(cancelled.progress);
  });

  return routes;
}
