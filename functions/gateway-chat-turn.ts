/**
 * @module A chat request run as a harness turn, when the caller asks for it with
 * `x-edge-rollout-continuation: token-ids` (the harness runner sets it for opencode, which speaks
 * chat): its earlier turns are the gateway's own records and a continuation's prompt is built from
 * token ids. Other chat callers keep the plain forward, streamed from upstream as it comes.
 */
import type { Context } from "hono";
import { fromWireError } from "../src/gateway/wire-errors";
import { chatEventStream } from "../src/gateway/apis/chat/chat-event-stream";
import type { JsonObject } from "../src/schemas/json";
import type { AppEnv } from "./env";
import { runTurn, SSE_HEADERS, TurnError } from "./gateway-turn";

/** The header that asks for a token-exact chat turn, and its one value. */
export const CONTINUATION_HEADER = "x-edge-rollout-continuation";

/** Answers a chat request as a turn: JSON, or a chat event stream generated from the whole reply. */
export async function chatTurn(
  c: Context<{ Bindings: AppEnv }>,
  rolloutId: string,
  body: JsonObject,
): Promise<Response> {
  const { reply } = runTurn(c, rolloutId, body);
  if (body.stream === true) {
    const options = body.stream_options as { include_usage?: unknown } | undefined;
    return new Response(chatEventStream(reply, { includeUsage: options?.include_usage === true }), {
      status: 200,
      headers: SSE_HEADERS,
    });
  }
  try {
    return c.json(await reply);
  } catch (error) {
    if (error instanceof TurnError)
      throw fromWireError({
        name: "GatewayError",
        code: "gateway",
        status: error.status,
        message: error.message,
        ...(error.retryAfterSeconds === undefined
          ? {}
          : { retryAfterSeconds: error.retryAfterSeconds }),
      });
    throw error;
  }
}
