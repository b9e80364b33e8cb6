/** @module `/v1/rollouts`: create, read, follow (SSE) and cancel rollouts. */
import { objects } from "../src/runtime/objects";
import { Hono } from "hono";
import { ConflictError, InvalidInputError, NotFoundError } from "../src/errors";
import {
  AddEventsRequest,
  CreateRolloutRequest,
  EXTERNAL_AGENT,
  FinishRolloutRequest,
  isExternalAgent,
  runnerAgentOf,
  type RolloutSpec,
} from "../src/schemas/rollout-api";
import { rolloutKey } from "../src/gateway";
import { agentRegistry } from "../src/sdk";
import { type AppEnv, gatewaySecret } from "./env";
import { parseJsonBody } from "./middleware/problem-details";
import { rolloutEvents, rolloutIdParam, rolloutView } from "./views/rollout-views";
import { rolloutTrace } from "../src/sink/formats";
import { batchOfGroupUid } from "../src/runtime/batch";
import type { RolloutGroup } from "../src/schemas/rollout-group";
import { placementIssues } from "../src/training";

/** Headers of a rollout's event stream: not cached, not buffered by a proxy on the way. */
const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  "x-accel-buffering": "no",
};

/** The HTTP error for a refused session write. */
function writeError(
  rolloutId: string,
  refused: { reason: string; message?: string; status?: string | null },
): Error {
  if (refused.reason === "not_found")
    return new NotFoundError(`rollout ${rolloutId} does not exist`);
  const message = refused.message ?? `rollout ${rolloutId} is ${refused.status ?? refused.reason}`;
  if (refused.reason === "invalid") return new InvalidInputError(message);
  return new ConflictError(message);
}

/**
 * Checks the group a caller puts a rollout in: a registered training mode and data manager (else
 * every result would be refused by the feed after the rollout ran), no `batch_id` (only batches
 * set it), and no uid of an existing batch's group (a stranger's member with another group_size
 * would make the feed refuse the real members).
 */
async function checkGroup(env: AppEnv, group: RolloutGroup | undefined): Promise<void> {
  if (!group) return;
  const issues = placementIssues(group, "group.");
  if (group.batch_id !== null)
    issues.push({
      path: "group.batch_id",
      message: "batch_id is set only by batches (POST /v1/batches); leave it out",
    });
  if (issues.length > 0)
    throw new InvalidInputError(issues.map((i) => `${i.path}: ${i.message}`).join("; "), {
      status: 422,
      details: issues,
    });
  const batchId = batchOfGroupUid(group.uid);
  if (batchId !== undefined && (await objects(env).batch(batchId).progress())) {
    const message = `uid ${group.uid} is a group of batch ${batchId}; only that batch adds members to it`;
    throw new ConflictError(message, { details: [{ path: "group.uid", message }] });
  }
}

/** Routes under `/v1/rollouts`. */
export function rolloutsRoutes(): Hono<{ Bindings: AppEnv }> {
  const routes = new Hono<{ Bindings: AppEnv }>();

  routes.post("/", async (c) => {
    const body = await parseJsonBody(c, CreateRolloutRequest);
    const kind = isExternalAgent(body.agent) ? "external" : "driven";
    if (kind === "driven" && !agentRegistry.get(body.agent)) {
      throw new InvalidInputError(
        `agent: "${body.agent}" is not registered (known: ${[EXTERNAL_AGENT, "external:<runner agent>", ...agentRegistry.names()].join(", ")})`,
        {
          details: [{ path: "agent", message: `unknown agent "${body.agent}"` }],
        },
      );
    }
    await checkGroup(c.env, body.group);
    const rolloutId = body.rollout_id ?? crypto.randomUUID();
    const task = {
      ...body.task,
      task_id: body.task.task_id || rolloutId,
      agent_name: body.task.agent_name || body.agent,
    };
    // `external` alone is run by its creator with the key answered here; `external:<name>` is offered to runners of <name>.
    const runner = body.agent === EXTERNAL_AGENT ? null : runnerAgentOf(body.agent);
    const spec: RolloutSpec = {
      rollout_id: rolloutId,
      kind,
      agent: body.agent,
      task,
      config: body.config,
      group: body.group ?? null,
      created_at: Date.now(),
      runner,
      tree: null,
    };
    const created = await objects(c.env).session(rolloutId).create(spec);
    if (!created.ok) throw new ConflictError(created.message);
    const origin = new URL(c.req.url).origin;
    const llmUrl = `${origin}/v1/rollouts/${rolloutId}/llm/v1`;
    const answer = {
      rollout_id: rolloutId,
      status: created.status,
      created: created.created,
      // `endpoint` is Agent-lightning's name for the same URL.
      llm: {
        base_url: llmUrl,
        endpoint: llmUrl,
        api_key: await rolloutKey(gatewaySecret(c.env), rolloutId),
      },
      links: { self: `/v1/rollouts/${rolloutId}`, events: `/v1/rollouts/${rolloutId}/events` },
    };
    const status = created.created ? 202 : 200;
    if (!body.stream) return c.json(answer, status);
    // Create and follow in one request: the session's own stream, opened by the answer. It has no
    // event id, so a client that lost the stream resumes from its last step with GET …/events.
    const stream = await rolloutEvents(c.env, rolloutId, undefined, undefined, {
      event: "created",
      data: answer,
    });
    return new Response(stream, { status, headers: SSE_HEADERS });
  });

  routes.post("/:id/events", async (c) => {
    const rolloutId = rolloutIdParam(c.req.param("id"));
    const body = await parseJsonBody(c, AddEventsRequest);
    const added = await objects(c.env).session(rolloutId).addEvents(body.events);
    if (!added.ok) throw writeError(rolloutId, added);
    return c.json(
      { rollout_id: rolloutId, sequence_ids: added.spans.map((span) => span.sequence_id) },
      201,
    );
  });

  routes.post("/:id/finish", async (c) => {
    const rolloutId = rolloutIdParam(c.req.param("id"));
    const body = await parseJsonBody(c, FinishRolloutRequest);
    const ended = await objects(c.env).session(rolloutId).finishExternal(body);
    if (!ended.ok) throw writeError(rolloutId, ended);
    return c.json({
      rollout_id: rolloutId,
      status: ended.status,
      termination_reason: ended.termination_reason,
    });
  });

  routes.get("/:id", async (c) =>
    c.json(await rolloutView(c.env, rolloutIdParam(c.req.param("id")))),
  );

  // OTLP/JSON: the body can be POSTed unchanged to an OpenTelemetry collector's /v1/traces.
  routes.get("/:id/otlp", async (c) =>
    c.json(await rolloutTrace(await rolloutView(c.env, rolloutIdParam(c.req.param("id"))))),
  );

  // What this rollout's session served and did in SQLite since its object started (in memory):
  // the measured Durable Object requests and rows written behind docs/scale.md's cost per step.
  routes.get("/:id/usage", async (c) => {
    const rolloutId = rolloutIdParam(c.req.param("id"));
    const usage = await objects(c.env).session(rolloutId).usageCounts();
    if (usage === null) throw new NotFoundError(`rollout ${rolloutId} does not exist`);
    return c.json({
      rollout_id: rolloutId,
      requests: {
        total: usage.requests.total,
        by_method: usage.requests.by_method,
        since: usage.requests.since,
      },
      sqlite: usage.sqlite,
    });
  });

  routes.get("/:id/events", async (c) => {
    const stream = await rolloutEvents(
      c.env,
      rolloutIdParam(c.req.param("id")),
      c.req.header("last-event-id"),
      c.req.query("after"),
    );
    return new Response(stream, { headers: SSE_HEADERS });
  });

  routes.post("/:id/cancel", async (c) => {
    const rolloutId = rolloutIdParam(c.req.param("id"));
    const cancelled = await objects(c.env).session(rolloutId).cancel();
    if (!cancelled.ok) {
      if (cancelled.reason === "not_found")
        throw new NotFoundError(`rollout ${rolloutId} does not exist`);
      throw new ConflictError(`rollout ${rolloutId} already ended (${cancelled.status})`);
    }
    return c.json({
      rollout_id: rolloutId,
      status: cancelled.status,
      termination_reason: cancelled.termination_reason,
    });
  });

  return routes;
}
