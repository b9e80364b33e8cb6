/**
 * @module The Responses API's server-sent events for one call, generated from the whole chat reply
 * (https://platform.openai.com/docs/api-reference/responses-streaming). `response.created` and
 * `response.in_progress` go out at once; while the reply is pending an SSE comment goes out every
 * `keepaliveMs`, because a harness's idle timer (Codex's `stream_idle_timeout_ms`) and proxies
 * would otherwise cut a long prefill; then each output item's events and `response.completed` (or
 * `response.incomplete`), or `response.failed` when the reply fails. Every event carries
 * `sequence_number`, counting from 0.
 */
import type { JsonObject } from "../../../schemas/json";
import { finishedState, type ResponseContext, responseObject } from "./chat-to-responses";
import { itemEvents, type PendingEvent } from "./item-events";
import type { ChatReplyJson } from "../chat-reply";
import { pendingReplyStream, sseEvent } from "../sse";

/** Options of `responsesEventStream`. */
export interface ResponsesStreamOptions extends ResponseContext {
  /** Milliseconds between keepalive comments while the reply is pending; default 5000. */
  keepaliveMs?: number;
}

/**
 * The `response.error` code for a failure: the error's HTTP `status` when it carries one (429 →
 * `rate_limit_exceeded`, which Codex retries; other 4xx → `invalid_prompt`), else `server_error`.
 */
function failure(error: unknown): { code: string; message: string } {
  const { status, message } = (error ?? {}) as { status?: unknown; message?: unknown };
  const text =
    typeof status === "number" && typeof message === "string"
      ? message
      : "The server had an error while processing your request.";
  if (status === 429) return { code: "rate_limit_exceeded", message: text };
  if (typeof status === "number" && status >= 400 && status < 500)
    return { code: "invalid_prompt", message: text };
  return { code: "server_error", message: text };
}

/**
 * The SSE body of a streamed Responses call whose chat reply is `reply`. Never errors the stream:
 * a rejected reply (duck-typed `{status, message}`) becomes `response.failed`, then the stream
 * closes. Cancelling the stream stops the keepalives; the reply is still awaited by its owner.
 * @example new Response(responsesEventStream(session.run(chat), { model, callId, request }),
 *   { headers: { "content-type": "text/event-stream" } })
 */
export function responsesEventStream(
  reply: Promise<ChatReplyJson>,
  options: ResponsesStreamOptions,
): ReadableStream<Uint8Array> {
  const { keepaliveMs = 5000, ...rest } = options;
  const context: ResponseContext = {
    ...rest,
    createdAt: rest.createdAt ?? Math.floor(Date.now() / 1000),
  };
  let sequence = 0;
  const event = ({ type, ...fields }: PendingEvent) =>
    sseEvent(type, { type, sequence_number: sequence++, ...fields });
  const pending = responseObject(context, { status: "in_progress", output: [], usage: null });
  const opening = [
    event({ type: "response.created", response: pending }),
    event({ type: "response.in_progress", response: pending }),
  ];
  return pendingReplyStream(reply, keepaliveMs, opening, (outcome) => {
    if (!outcome.ok) return [event(failedEvent(context, outcome.error))];
    // A reply that is not a chat completion throws UnusableReplyError (502): the stream's
    // helper asks again with it, and the answer is response.failed.
    const state = finishedState(outcome.value, context);
    const items = state.output.flatMap((item, index) => itemEvents(item, index));
    const type = state.status === "incomplete" ? "response.incomplete" : "response.completed";
    return [...items, { type, response: responseObject(context, state) }].map(event);
  });
}

function failedEvent(context: ResponseContext, error: unknown): PendingEvent {
  const response: JsonObject = responseObject(context, {
    status: "failed",
    output: [],
    usage: null,
    error: failure(error),
  });
  return { type: "response.failed", response };
}
