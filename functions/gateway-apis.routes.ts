/**
 * @module The rollout gateway's Anthropic Messages and OpenAI Responses endpoints, beside its Chat
 * Completions (`/v1/rollouts/:id/llm/v1/messages`, `/messages/count_tokens`, `/responses`, and the
 * same under a runner attempt's path): what Claude Code and Codex speak. Each request is
 * translated to one chat request (src/gateway/apis/), run as a harness turn by the rollout's
 * session (functions/gateway-turn.ts), and its chat reply translated back, as JSON or as the API's
 * own event stream. Errors come in each API's own shape: the harness's SDK reads them.
 */
import { Hono, type Context } from "hono";
import { AppError, ModelError } from "../src/errors";
import {
  anthropicError,
  chatToMessages,
  messagesEventStream,
  messagesToChat,
  parseMessagesCountTokensRequest,
  parseMessagesRequest,
} from "../src/gateway/apis/messages";
import {
  chatToResponses,
  openaiError,
  parseResponsesRequest,
  ResponsesRequestError,
  responsesEventStream,
  responsesToChat,
} from "../src/gateway/apis/responses";
import type { JsonObject } from "../src/schemas/json";
import type { AppEnv } from "./env";
import { authorizeRollout } from "./gateway-auth";
import { failsEarly, runTurn, SSE_HEADERS } from "./gateway-turn";
import { z } from "zod";
import { countChatTokensFor } from "../src/runtime";
import { objects } from "../src/runtime/objects";
import { MAX_GATEWAY_BODY_BYTES } from "./gateway-limits";
import { parseJsonBody } from "./middleware/problem-details";

type GatewayContext = Context<{ Bindings: AppEnv }>;

/** An error's HTTP status and message, whatever raised it (a key check, a body, the turn). */
function statusOf(error: unknown): { status: number; message: string; retryAfter?: number } {
  if (error instanceof AppError) {
    // A weight sync's refusal (PolicySyncingError) or an upstream's says when to come back.
    const retry = (error as { retryAfterSeconds?: number | null }).retryAfterSeconds;
    return {
      status: error.status,
      message: error.message,
      ...(typeof retry === "number" ? { retryAfter: retry } : {}),
    };
  }
  console.error("gateway API call failed", error);
  return { status: 500, message: "internal error" };
}

function errorResponse(
  c: GatewayContext,
  error: unknown,
  shape: (status: number, message: string) => { status: number; body: unknown },
): Response {
  const { status, message, retryAfter } = statusOf(error);
  const answer = shape(status, message);
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (retryAfter !== undefined) headers["retry-after"] = String(retryAfter);
  return c.body(JSON.stringify(answer.body), answer.status as 400, headers);
}

/** The body as JSON, bounded in size and depth like every gateway body (400/413 otherwise); the API's schema judges it next. */
function readJsonText(c: GatewayContext): Promise<unknown> {
  return parseJsonBody(c, z.unknown(), { maxBytes: MAX_GATEWAY_BODY_BYTES });
}

/** The Messages and Responses routes, mounted inside the gateway's routes (after its key check). */
export function gatewayApiRoutes(): Hono<{ Bindings: AppEnv }> {
  const routes = new Hono<{ Bindings: AppEnv }>();
  const anthropic = (status: number, message: string) => anthropicError(status, message);
  const openai = (status: number, message: string) => openaiError(status, message);

  routes.post("/messages", async (c) => {
    try {
      const rolloutId = await authorizeRollout(c);
      const parsed = parseMessagesRequest(await readJsonText(c));
      if (!parsed.ok)
        return c.body(JSON.stringify(parsed.error.body), parsed.error.status as 400, {
          "content-type": "application/json",
        });
      const { chat, stream, requestedModel } = messagesToChat(parsed.request);
      const { callId, reply } = runTurn(c, rolloutId, chat);
      const context = {
        model: requestedModel,
        callId,
        ...(parsed.request.stop_sequences ? { stopSequences: parsed.request.stop_sequences } : {}),
      };
      if (!stream) return c.json(chatToMessages(await reply, context));
      await failsEarly(reply);
      return new Response(messagesEventStream(reply, context), {
        status: 200,
        headers: SSE_HEADERS,
      });
    } catch (error) {
      return errorResponse(c, error, anthropic);
    }
  });

  routes.post("/messages/count_tokens", async (c) => {
    try {
      const rolloutId = await authorizeRollout(c);
      const parsed = parseMessagesCountTokensRequest(await readJsonText(c));
      if (!parsed.ok)
        return c.body(JSON.stringify(parsed.error.body), parsed.error.status as 400, {
          "content-type": "application/json",
        });
      const { chat } = messagesToChat(parsed.request);
      const counted = await countChatTokensFor(c.env, rolloutId, chat);
      if (counted === null)
        return errorResponse(
          c,
          new ModelError("the model server cannot count tokens (no /tokenize)", {
            retryable: false,
          }),
          anthropic,
        );
      // Not a generation, so not a call: kept as a span beside the harness's calls (never trained on).
      const noted = objects(c.env)
        .session(rolloutId)
        .addEvents([{ kind: "annotation", name: "count_tokens", value: { input_tokens: counted } }])
        .catch(() => undefined);
      try {
        c.executionCtx.waitUntil(noted);
      } catch {
        // No execution context (an in-Worker caller): the promise runs on its own.
      }
      return c.json({ input_tokens: counted });
    } catch (error) {
      return errorResponse(c, error, anthropic);
    }
  });

  routes.post("/responses", async (c) => {
    try {
      const rolloutId = await authorizeRollout(c);
      const request = parseResponsesRequest(await readJsonText(c));
      const { chat, stream, requestedModel } = responsesToChat(request);
      const { callId, reply } = runTurn(c, rolloutId, chat);
      const context = { model: requestedModel, callId, request };
      if (!stream) return c.json(chatToResponses(await reply, context));
      await failsEarly(reply);
      return new Response(responsesEventStream(reply, context), {
        status: 200,
        headers: SSE_HEADERS,
      });
    } catch (error) {
      if (error instanceof ResponsesRequestError) {
        const answer = openaiError(400, error.message, error.param);
        return c.body(JSON.stringify(answer.body), 400, { "content-type": "application/json" });
      }
      return errorResponse(c, error, openai);
    }
  });
  return routes;
}
