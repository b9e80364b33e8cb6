/**
 * @module One harness turn through the rollout's session object: the translated chat request runs
 * there as a turn (earlier turns the gateway's own, continuations from token ids:
 * src/gateway/turns/) and comes back as one chat completion, which the calling route turns into
 * its API's reply or event stream. A request without tools is a harness's side call (a title, a
 * small-model check): recorded with `purpose: "side"`, never trained on, never a turn.
 */
import type { Context } from "hono";
import { objects } from "../src/runtime/objects/object-directory";
import type { JsonObject } from "../src/schemas/json";
import type { AppEnv } from "./env";
import { callMetaOf } from "./gateway-call-meta";

/** An error a turn failed with, as the API translators read it (an HTTP status and a message). */
export class TurnError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = "TurnError";
  }
}

/** Whether a chat request offers tools (a harness's loop always does; its side calls do not). */
function offersTools(chat: JsonObject): boolean {
  return Array.isArray(chat.tools) && chat.tools.length > 0;
}

/** Starts the turn; `reply` is the chat completion (or a TurnError), `callId` the id its reply is minted from. */
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
      if (!result.ok)
        throw new TurnError(
          result.error.status,
          result.error.message,
          result.error.retryAfterSeconds,
        );
      if (!("json" in result)) throw new TurnError(500, "a turn answered with a stream");
      return JSON.parse(result.json) as JsonObject;
    });
  return { callId: meta.callId, reply };
}

/** Response headers of an SSE answer. */
export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
} as const;
