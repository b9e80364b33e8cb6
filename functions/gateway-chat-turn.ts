/**
 * @module A chat request run as a harness turn, when the caller asks for it with
 * `x-edge-rollout-continuation: token-ids` (the harness runner sets it for opencode, which speaks
 * chat): its earlier turns are the gateway's own records and a continuation's prompt is built from
 * token ids. Other chat callers keep the plain forward, streamed from upstream as it comes.
 */
import type { Context } from "hono";
import { chatEventStream } from "../src/gateway/apis/chat";
import type { JsonObject } from "../src/schemas/json";
import type { AppEnv } from "./env";
import { failsEarly, runTurn, SSE_HEADERS } from "./gateway-turn";

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
    await failsEarly(reply);
    const options = body.stream_options as { include_usage?: unknown } | undefined;
    return new Response(chatEventStream(reply, { includeUsage: options?.include_usage === true }), {
      status: 200,
      headers: SSE_HEADERS,
    });
  }
  // A refusal (a weight sync, a limit) goes to the app's error handler like any chat call's.
  return c.json(await reply);
}
