/**
 * @module A whole Messages response as the API's stream events, after
 * https://docs.anthropic.com/en/docs/build-with-claude/streaming: `message_start`, `ping`, per
 * content block `content_block_start` / `content_block_delta`… / `content_block_stop`, then
 * `message_delta` (stop reason, output tokens) and `message_stop`. The reply is complete before
 * the first event, so the events replay it; a harness's SDK rebuilds the same message from them.
 */
import type { JsonObject } from "../../../schemas/json";
import type { MessagesResponse, ResponseBlock } from "./reply-to-messages";

/** One server-sent event: its `event:` name and its `data:` JSON. */
export interface MessagesEvent {
  event: string;
  data: JsonObject;
}

/**
 * The most UTF-16 units one delta carries. A long answer goes out as a few deltas, as the API
 * sends it, without one event per token: a harness only concatenates them.
 */
export const DELTA_CHUNK = 2048;

/** `text` in pieces of at most `size` units, never splitting a surrogate pair; "" is one piece. */
export function chunks(text: string, size = DELTA_CHUNK): string[] {
  if (text.length <= size) return [text];
  const pieces: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + size, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--; // keep a pair together
    pieces.push(text.slice(start, end));
    start = end;
  }
  return pieces;
}

/** The block as `content_block_start` announces it: empty, its deltas fill it. */
function emptyBlock(block: ResponseBlock): JsonObject {
  switch (block.type) {
    case "thinking":
      return { type: "thinking", thinking: "", signature: "" };
    case "text":
      return { type: "text", text: "" };
    case "tool_use":
      return { type: "tool_use", id: block.id, name: block.name, input: {} };
  }
}

/** The deltas that fill `block`: thinking then its signature, text, or the input's JSON text. */
function blockDeltas(block: ResponseBlock): JsonObject[] {
  switch (block.type) {
    case "thinking":
      return [
        ...chunks(block.thinking).map((thinking) => ({ type: "thinking_delta", thinking })),
        { type: "signature_delta", signature: block.signature },
      ];
    case "text":
      return chunks(block.text).map((text) => ({ type: "text_delta", text }));
    case "tool_use":
      return chunks(JSON.stringify(block.input)).map((partial_json) => ({
        type: "input_json_delta",
        partial_json,
      }));
  }
}

/**
 * The event sequence for `message`.
 * @example messageEvents(message).map((e) => e.event)
 * // ["message_start", "ping", "content_block_start", "content_block_delta", "content_block_stop",
 * //  "message_delta", "message_stop"]
 */
export function messageEvents(message: MessagesResponse): MessagesEvent[] {
  const events: MessagesEvent[] = [
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          id: message.id,
          type: "message",
          role: "assistant",
          model: message.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...message.usage, output_tokens: 0 },
        },
      },
    },
    { event: "ping", data: { type: "ping" } },
  ];
  message.content.forEach((block, index) => {
    events.push({
      event: "content_block_start",
      data: { type: "content_block_start", index, content_block: emptyBlock(block) },
    });
    for (const delta of blockDeltas(block))
      events.push({
        event: "content_block_delta",
        data: { type: "content_block_delta", index, delta },
      });
    events.push({ event: "content_block_stop", data: { type: "content_block_stop", index } });
  });
  events.push(
    {
      event: "message_delta",
      data: {
        type: "message_delta",
        delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence },
        usage: { output_tokens: message.usage.output_tokens },
      },
    },
    { event: "message_stop", data: { type: "message_stop" } },
  );
  return events;
}

/** `event` as SSE text. */
export function sseText(event: MessagesEvent): string {
  return `event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`;
}
