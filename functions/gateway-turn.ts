/**
 * @module One harness turn through the rollout's session object: the translated chat request runs
 * there as a turn (earlier turns the gateway's own, continuations from token ids:
 * src/gateway/turns/) and comes back as one chat completion, which the calling route turns into
 * its API's reply or event stream. A request without tools is a harness's side call (a title, a
 * small-model check): recorded with `purpose: "side"`, never trained on, never a turn.
 */
import type { Context } from "hono";
import { fromWireError } from "../src/gateway";
import { objects } from "../src/runtime/objects";
import type { JsonObject } from "../src/schemas/json";
import type { AppEnv } from "./env";
import { callMetaOf } from "./gateway-call-meta";

/** Whether a chat request offers tools (a harness's loop always does; its side calls do not). */
function offersTools(chat: JsonObject): boolean {
  return Array.isArray(chat.tools) && chat.tools.length > 0;
}

/**
 * Starts the turn; `reply` is the chat completion, or rejects with the error the session answered
 * (an AppError with its HTTP status, and Retry-After for a weight sync), `callId` the id its reply
 * is minted from.
 */
export function runTurn(
  c: Context<{ Bindings: AppEnv }>,
  rolloutId: string,
  chat: JsonObject,
): { callId: string; reply: Promise<JsonObject> } {
  const meta = callMetaOf(c, rolloutId);
  // The turn runs as one JSON reply; vLLM refuses stream options on a call that does not stream.
  const { stream_options: _streamOptions, ...body } = chat;
  const side = !offersTools(chat) && meta.purpose === "policy";
  const reply = objects(c.env)
    .session(rolloutId)
    .gatewayCall(
      "/chat/completions",
      { ...body, stream: false },
      { ...meta, purpose: side ? "side" : meta.purpose, turns: !side },
    )
    .then((result) => {
      if (!result.ok) throw fromWireError(result.error);
      if (!("json" in result)) throw new Error("a harness turn answered with a stream");
      return JSON.parse(result.json) as JsonObject;
    });
  return { callId: meta.callId, reply };
}

/** How long a streamed answer waits for an early failure before it opens its stream. */
const EARLY_FAILURE_MS = 1000;

/**
 * Waits up to a second for `reply` to fail: an admission refused (a weight sync: 429 +
 * Retry-After) or a request the backend refused comes back within it, as an HTTP error the harness
 * retries or reports; a stream is opened only after. Rejects with that failure.
 */
export async function failsEarly(reply: Promise<unknown>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, EARLY_FAILURE_MS)));
  try {
    await Promise.race([reply.then(() => undefined), waited]);
  } finally {
    clearTimeout(timer);
  }
}

/** Response headers of an SSE answer. */
export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
} as const;
