/**
 * @module The SSE body of a streamed Messages call. The session answers with a whole chat
 * completion, so the stream has nothing to say until it comes: meanwhile it sends SSE comments,
 * which every SSE client skips, so that no idle timer (the harness's, a proxy's) ends the call.
 * A failure before the reply is an `event: error`, as the API sends one after its 200.
 */
import { anthropicErrorOf } from "./anthropic-error";
import type { ChatReplyJson } from "../chat-reply";
import { pendingReplyStream } from "../sse";
import { messageEvents, sseText } from "./message-events";
import { chatToMessages, type ChatToMessagesOptions } from "./reply-to-messages";

/** Options of `messagesEventStream`. */
export interface MessagesEventStreamOptions extends ChatToMessagesOptions {
  /** Milliseconds between keepalive comments while the reply is pending. Default 5000. */
  keepaliveMs?: number;
}

/** The keepalive comment line (the one of every translated stream). */
export { KEEPALIVE } from "../sse";

/**
 * The Messages SSE stream for a pending reply: keepalives every `keepaliveMs` until `reply`
 * settles, then the API's whole event sequence, or one `error` event when `reply` rejects (an
 * error carrying `status` and `message` keeps them, see `anthropicErrorOf`) or is not a chat
 * completion. Cancelling the stream (the harness went away) stops the keepalives; the reply is
 * still awaited, so its rejection is never unhandled.
 * @example
 * return new Response(messagesEventStream(session.call(chat), { model, callId }), {
 *   headers: { "content-type": "text/event-stream" },
 * });
 */
export function messagesEventStream(
  reply: Promise<ChatReplyJson>,
  options: MessagesEventStreamOptions,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return pendingReplyStream(reply, options.keepaliveMs ?? 5000, [], (outcome) => [
    encoder.encode(
      outcome.ok
        ? messageEvents(chatToMessages(outcome.value, options)).map(sseText).join("")
        : sseText({ event: "error", data: { ...anthropicErrorOf(outcome.error).body } }),
    ),
  ]);
}
