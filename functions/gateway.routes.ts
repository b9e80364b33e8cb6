/** @module A rollout's own OpenAI-compatible endpoint: `/v1/rollouts/:id/llm/v1/*`, keyed per rollout. */
import { objects } from "../src/runtime/objects";
import { Hono, type Context } from "hono";
import { fromWireError, type UpstreamPath } from "../src/gateway";
import { GatewayChatRequest, GatewayCompletionRequest } from "../src/schemas/gateway-requests";
import { CALL_ID_HEADER } from "../src/schemas/llm-call";
import type { JsonObject } from "../src/schemas/json";
import type { AppEnv } from "./env";
import { authorizeRollout } from "./gateway-auth";
import { callMetaOf } from "./gateway-call-meta";
import { CONTINUATION_HEADER, chatTurn } from "./gateway-chat-turn";
import { gatewayApiRoutes } from "./gateway-apis.routes";
import { MAX_GATEWAY_BODY_BYTES } from "./gateway-limits";
import { parseJsonBody } from "./middleware/problem-details";

type GatewayContext = Context<{ Bindings: AppEnv }>;

/**
 * The session's stream as this response's body, telling the session when the caller leaves (it
 * cancels the body, or its request's signal aborts), so the call is recorded as one nobody
 * received. Either way the session goes on reading the upstream to its end.
 */
function toldWhenCallerLeaves(
  stream: ReadableStream<Uint8Array>,
  c: GatewayContext,
  rolloutId: string,
  callId: string,
): ReadableStream<Uint8Array> {
  const stub = objects(c.env).session(rolloutId);
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
 * (src/runtime/session/calls/gateway-call-owner.ts). This route authorizes and relays the answer.
 * Online serving's chat route relays its sessions' calls the same way (functions/online.routes.ts).
 */
export async function forward(
  c: GatewayContext,
  rolloutId: string,
  path: UpstreamPath,
  body: JsonObject & { stream?: boolean },
): Promise<Response> {
  const meta = callMetaOf(c, rolloutId);
  const result = await objects(c.env).session(rolloutId).gatewayCall(path, body, meta);
  if (!result.ok) throw fromWireError(result.error);
  if ("stream" in result)
    return new Response(toldWhenCallerLeaves(result.stream, c, rolloutId, meta.callId), {
      status: 200,
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-cache",
        [CALL_ID_HEADER]: meta.callId,
      },
    });
  // The upstream's own bytes when the backend kept them: serializing the parsed reply again costs CPU for nothing.
  return c.body(result.json, 200, {
    "content-type": "application/json",
    [CALL_ID_HEADER]: meta.callId,
  });
}

/** Routes mounted at `/v1/rollouts/:id/llm/v1` and, for runner attempts, `/v1/rollouts/:id/attempts/:attempt/llm/v1`. */
export function gatewayRoutes(): Hono<{ Bindings: AppEnv }> {
  const routes = new Hono<{ Bindings: AppEnv }>();
  // Every route checks the rollout's key before it reads the body.
  routes.post("/chat/completions", async (c) => {
    const rolloutId = await authorizeRollout(c);
    const body = (await parseJsonBody(c, GatewayChatRequest, {
      maxBytes: MAX_GATEWAY_BODY_BYTES,
    })) as JsonObject;
    if (c.req.header(CONTINUATION_HEADER) === "token-ids") return chatTurn(c, rolloutId, body);
    return forward(c, rolloutId, "/chat/completions", body);
  });
  routes.post("/completions", async (c) => {
    const rolloutId = await authorizeRollout(c);
    const body = (await parseJsonBody(c, GatewayCompletionRequest, {
      maxBytes: MAX_GATEWAY_BODY_BYTES,
    })) as JsonObject;
    return forward(c, rolloutId, "/completions", body);
  });
  routes.route("/", gatewayApiRoutes());
  routes.get("/models", async (c) => {
    await authorizeRollout(c);
    const model = (await objects(c.env).policy().fence()).snapshot.model ?? c.env.LLM_MODEL;
    return c.json({
      object: "list",
      data: [{ id: model, object: "model", created: 0, owned_by: "edge-rollout" }],
    });
  });
  return routes;
}
