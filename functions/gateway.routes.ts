/** @module A rollout's own OpenAI-compatible endpoint: `/v1/rollouts/:id/llm/v1/*`, keyed per rollout. */
import { objects } from "../src/runtime/objects/object-directory";
import { Hono, type Context } from "hono";
import { InvalidInputError, NotFoundError, UnauthorizedError } from "../src/errors";
import type { UpstreamPath } from "../src/gateway/model-backend";
import { checkRolloutKey } from "../src/gateway/rollout-keys";
import { fromWireError } from "../src/gateway/wire-errors";
import { GatewayChatRequest, GatewayCompletionRequest } from "../src/schemas/gateway-requests";
import type { JsonObject } from "../src/schemas/json";
import { ATTEMPT_HEADER, CallPurpose, PURPOSE_HEADER } from "../src/schemas/llm-call";
import { RolloutId } from "../src/schemas/rollout-api";
import { type AppEnv, gatewaySecret } from "./env";
import { parseJsonBody } from "./middleware/problem-details";

type GatewayContext = Context<{ Bindings: AppEnv }>;

/** Checks `Authorization: Bearer <rollout key>` for the rollout in the path: 401 forged/missing, 403 another rollout's. */
async function authorize(c: GatewayContext): Promise<string> {
  const parsed = RolloutId.safeParse(c.req.param("id"));
  if (!parsed.success) throw new NotFoundError("no such rollout");
  const match = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "");
  if (!match) throw new UnauthorizedError("missing Authorization: Bearer <rollout api_key>", 401);
  const verdict = await checkRolloutKey(gatewaySecret(c.env), match[1]!, parsed.data);
  if (verdict === "invalid") throw new UnauthorizedError("invalid rollout api_key", 401);
  if (verdict === "other_rollout")
    throw new UnauthorizedError("this api_key belongs to another rollout", 403);
  return parsed.data;
}

/** The runner attempt in the path (`/v1/rollouts/:id/attempts/:attempt/llm/v1`), if the call came that way. */
function pathAttemptOf(c: GatewayContext): number | undefined {
  const raw = c.req.param("attempt");
  if (raw === undefined) return undefined;
  const attempt = Number(raw);
  if (!Number.isInteger(attempt) || attempt < 1)
    throw new NotFoundError(`no attempt ${raw} of this rollout`);
  return attempt;
}

/** The attempt a call belongs to: the path's, else what an in-Worker attempt's fetch declares in its header; null when neither. */
function attemptOf(c: GatewayContext): number | null {
  const fromPath = pathAttemptOf(c);
  if (fromPath !== undefined) return fromPath;
  const raw = c.req.header(ATTEMPT_HEADER);
  if (raw === undefined) return null;
  const attempt = Number(raw);
  if (!Number.isInteger(attempt) || attempt < 1)
    throw new InvalidInputError(`${ATTEMPT_HEADER} must be an attempt number >= 1`, {
      status: 400,
    });
  return attempt;
}

/** What the call is for: `judge` when a grader's llm says so in its header, else `policy`. */
function purposeOf(c: GatewayContext): CallPurpose {
  const raw = c.req.header(PURPOSE_HEADER);
  if (raw === undefined) return "policy";
  const purpose = CallPurpose.safeParse(raw);
  if (!purpose.success)
    throw new InvalidInputError(
      `${PURPOSE_HEADER} must be one of ${CallPurpose.options.join(", ")}`,
      { status: 400 },
    );
  return purpose.data;
}

/**
 * The session's stream as this response's body, telling the session when the caller leaves (it
 * cancels the body, or its request's signal aborts), so the call is recorded as one nobody
 * received. Either way the session goes on reading the upstream to its end.
 */
function toldWhenCallerLeaves(
  stream: ReadableStream<Uint8Array>,
  c: GatewayContext,
  callId: string,
): ReadableStream<Uint8Array> {
  const stub = objects(c.env).session(c.req.param("id")!);
  const reader = stream.getReader();
  let told = false;
  const tell = (): void => {
    if (told) return;
    told = true;
    const work = stub.callerLeft(callId).catch(() => undefined);
    try {
      c.executionCtx.waitUntil(work);
    } catch {
      // No execution context (an in-Worker caller): the promise runs on its own.
    }
  };
  c.req.raw.signal.addEventListener("abort", tell, { once: true });
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    async cancel(reason) {
      tell();
      await reader.cancel(reason).catch(() => undefined);
    },
  });
}

/**
 * Forwards one call through the rollout's session object, which owns it from there: it reads the
 * upstream to its end, records the call and releases its admission whatever this request does
 * (src/runtime/session/gateway-call-owner.ts). This route authorizes and relays the answer.
 */
async function forward(
  c: GatewayContext,
  path: UpstreamPath,
  body: JsonObject & { stream?: boolean },
): Promise<Response> {
  const rolloutId = await authorize(c);
  const pathAttempt = pathAttemptOf(c);
  const meta = {
    rolloutId,
    callId: `${rolloutId}/gw/${crypto.randomUUID()}`,
    attempt: attemptOf(c),
    purpose: purposeOf(c),
    ...(pathAttempt === undefined ? {} : { pathAttempt }),
  };
  const result = await objects(c.env).session(rolloutId).gatewayCall(path, body, meta);
  if (!result.ok) throw fromWireError(result.error);
  if ("stream" in result)
    return new Response(toldWhenCallerLeaves(result.stream, c, meta.callId), {
      status: 200,
      headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" },
    });
  // The upstream's own bytes when the backend kept them: serializing the parsed reply again costs CPU for nothing.
  return c.body(result.json, 200, { "content-type": "application/json" });
}

/**
 * Largest request body a rollout's gateway accepts: 4 MiB. A default `max_prompt_length` of
 * 131,072 tokens is ~0.5 MB of English text, but tokens of code, CJK text or JSON-escaped tool
 * output run to 10-15 bytes each (a 120k-token prompt of them is 1.8 MB), so 32 bytes per token
 * is the bound; the prompt's real length is then checked in tokens. Larger bodies would crowd the
 * 128 MB isolate that parses them while it serves other calls at the same time.
 */
export const MAX_GATEWAY_BODY_BYTES = 4 * 1024 * 1024;

/** Routes mounted at `/v1/rollouts/:id/llm/v1` and, for runner attempts, `/v1/rollouts/:id/attempts/:attempt/llm/v1`. */
export function gatewayRoutes(): Hono<{ Bindings: AppEnv }> {
  const routes = new Hono<{ Bindings: AppEnv }>();
  routes.post("/chat/completions", async (c) =>
    forward(
      c,
      "/chat/completions",
      (await parseJsonBody(c, GatewayChatRequest, {
        maxBytes: MAX_GATEWAY_BODY_BYTES,
      })) as JsonObject,
    ),
  );
  routes.post("/completions", async (c) =>
    forward(
      c,
      "/completions",
      (await parseJsonBody(c, GatewayCompletionRequest, {
        maxBytes: MAX_GATEWAY_BODY_BYTES,
      })) as JsonObject,
    ),
  );
  routes.get("/models", async (c) => {
    await authorize(c);
    const model = (await objects(c.env).policy().fence()).snapshot.model ?? c.env.LLM_MODEL;
    return c.json({
      object: "list",
      data: [{ id: model, object: "model", created: 0, owned_by: "edge-rollout" }],
    });
  });
  return routes;
}
