/**
 * @module One Messages message as chat messages. Each chat message is built with a fixed key
 * order from the fields it needs only, so the same turn gives the same JSON text on every call
 * whatever per-call noise the harness adds (`cache_control` moving each call in Claude Code, a
 * one-block text list sent once as a list and once as a string).
 */
import type { JsonObject } from "../../../schemas/json";
import { readTurnRef } from "../turn-ref";
import { blockText, contentText, PIECE_SEPARATOR } from "./content-text";
import type { ContentBlock, MessageParam } from "./messages-request";

/**
 * A user turn: its `tool_result` blocks become chat `tool` messages, in order, then its other
 * blocks one user message. The tool messages come first because a chat template expects them
 * right after the assistant turn that called the tools, and the API itself asks that tool
 * results lead the user turn. `is_error` has no chat field and is dropped: harnesses write the
 * failure into the result's text (Claude Code wraps it in `<tool_use_error>`).
 */
function userToChat(content: MessageParam["content"]): JsonObject[] {
  if (typeof content === "string") return [{ role: "user", content }];
  const messages: JsonObject[] = [];
  const pieces: string[] = [];
  for (const block of content) {
    if (block.type === "tool_result") {
      messages.push({
        role: "tool",
        tool_call_id: block.tool_use_id,
        content: contentText(block.content),
      });
      continue;
    }
    const text = blockText(block);
    if (text !== null) pieces.push(text);
  }
  // A turn of tool results alone is those results; any other turn is a user message, even empty.
  if (pieces.length > 0 || messages.length === 0)
    messages.push({ role: "user", content: pieces.join(PIECE_SEPARATOR) });
  return messages;
}

/** A chat tool call for a `tool_use` block; the arguments normalised as JSON.stringify writes them. */
function toolCall(block: Extract<ContentBlock, { type: "tool_use" }>): JsonObject {
  return {
    id: block.id,
    type: "function",
    function: { name: block.name, arguments: JSON.stringify(block.input) },
  };
}

/**
 * An assistant turn: text blocks → `content` (null when there is none), thinking →
 * `reasoning_content`, `tool_use` → `tool_calls`. A thinking block whose signature is one of the
 * gateway's turn references names the call that produced this turn: `x_gateway_call`, which the
 * session reads (to continue from that call's sampled token ids) and strips.
 * `redacted_thinking` has no text the policy wrote and is dropped.
 */
function assistantToChat(content: MessageParam["content"]): JsonObject {
  if (typeof content === "string") return { role: "assistant", content };
  const pieces: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: JsonObject[] = [];
  let gatewayCall: string | null = null;
  for (const block of content) {
    if (block.type === "thinking") {
      reasoning.push(block.thinking);
      if (gatewayCall === null && block.signature !== undefined)
        gatewayCall = readTurnRef(block.signature);
    } else if (block.type === "tool_use") {
      toolCalls.push(toolCall(block));
    } else {
      const text = blockText(block);
      if (text !== null) pieces.push(text);
    }
  }
  const message: JsonObject = {
    role: "assistant",
    content: pieces.length > 0 ? pieces.join(PIECE_SEPARATOR) : null,
  };
  if (reasoning.length > 0) message.reasoning_content = reasoning.join(PIECE_SEPARATOR);
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (gatewayCall !== null) message.x_gateway_call = gatewayCall;
  return message;
}

/**
 * The chat messages for one Messages message: `user` → tool messages and/or a user message,
 * `assistant` → one assistant message, `system` → one system message in place.
 * @example messageToChat({ role: "user", content: [{ type: "text", text: "hi" }] })
 * // [{ role: "user", content: "hi" }]
 */
export function messageToChat(message: MessageParam): JsonObject[] {
  switch (message.role) {
    case "user":
      return userToChat(message.content);
    case "assistant":
      return [assistantToChat(message.content)];
    case "system":
      return [{ role: "system", content: contentText(message.content) }];
  }
}
