/**
 * @module A chat completion as an Anthropic Messages response
 * (https://docs.anthropic.com/en/api/messages, "Response"). The model's reasoning leads as a
 * `thinking` block signed with the call's turn reference, so the harness's copy of this turn
 * names the call when it comes back.
 */
import type { JsonObject } from "../../../schemas/json";
import { mintTurnRef } from "../turn-ref";
import { readChatReply, type ChatReply, type ChatReplyJson } from "../chat-reply";

/** A content block of a reply. */
export type ResponseBlock =
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: JsonObject };

/** Why the model stopped, in the API's words. */
export type StopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use";

/** A Messages response body. */
export interface MessagesResponse {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: ResponseBlock[];
  stop_reason: StopReason;
  stop_sequence: string | null;
  usage: {
    input_tokens: number;
    output_tokens: number;
    cache_creation_input_tokens: number;
    cache_read_input_tokens: number;
  };
}

/** Options of `chatToMessages`. */
export interface ChatToMessagesOptions {
  /** The model the harness asked for, echoed back whatever the policy's model is called. */
  model: string;
  /** The gateway call that produced the reply: the message id and the thinking signature name it. */
  callId: string;
  /** The request's `stop_sequences`: a reply stopped by one of them says so (`stop_sequence`). */
  stopSequences?: readonly string[];
}

/** A message id for call `callId`: `msg_` and the call id with anything but [A-Za-z0-9_-] as `_`. */
export function messageId(callId: string): string {
  return `msg_${callId.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

/**
 * The tool input `args` stands for, or null when it is not a JSON object (the policy wrote
 * something else). Empty arguments are a call without arguments, as OpenAI servers send them.
 */
function toolInput(args: string): JsonObject | null {
  if (args.trim() === "") return {};
  try {
    const input: unknown = JSON.parse(args);
    if (typeof input === "object" && input !== null && !Array.isArray(input))
      return input as JsonObject;
  } catch {
    // not JSON: answered as text below
  }
  return null;
}

/**
 * The content blocks: thinking (when the model reasoned), text (when not empty), then one
 * `tool_use` per tool call. A call whose arguments are not a JSON object comes back as a text
 * block holding the arguments as written: a policy mistake the harness can show, never a 5xx.
 */
function contentBlocks(
  message: ChatReply["choices"][number]["message"],
  callId: string,
): ResponseBlock[] {
  const blocks: ResponseBlock[] = [];
  const reasoning = message.reasoning_content || message.reasoning;
  if (reasoning)
    blocks.push({ type: "thinking", thinking: reasoning, signature: mintTurnRef(callId) });
  if (message.content) blocks.push({ type: "text", text: message.content });
  for (const call of message.tool_calls ?? []) {
    const input = toolInput(call.function.arguments);
    if (input === null) blocks.push({ type: "text", text: call.function.arguments });
    else blocks.push({ type: "tool_use", id: call.id, name: call.function.name, input });
  }
  return blocks;
}

/**
 * The stop reason: `length` → max_tokens (the answer was cut, whatever it holds); a reply with
 * `tool_use` blocks → tool_use; a stop by one of the request's stop sequences (vLLM's
 * `stop_reason` names it) → stop_sequence; anything else → end_turn.
 */
function stopReason(
  choice: ChatReply["choices"][number],
  blocks: readonly ResponseBlock[],
  stopSequences: readonly string[],
): { stop_reason: StopReason; stop_sequence: string | null } {
  if (choice.finish_reason === "length") return { stop_reason: "max_tokens", stop_sequence: null };
  if (blocks.some((block) => block.type === "tool_use"))
    return { stop_reason: "tool_use", stop_sequence: null };
  const matched = choice.stop_reason;
  if (typeof matched === "string" && stopSequences.includes(matched))
    return { stop_reason: "stop_sequence", stop_sequence: matched };
  return { stop_reason: "end_turn", stop_sequence: null };
}

/**
 * Translates one chat completion into a Messages response. Throws UnusableReplyError (status
 * 502) when `reply` is not a chat completion.
 * @example
 * chatToMessages({ choices: [{ message: { content: "4" }, finish_reason: "stop" }] }, { model: "claude-x", callId: "c1" })
 * // { id: "msg_c1", type: "message", role: "assistant", model: "claude-x",
 * //   content: [{ type: "text", text: "4" }], stop_reason: "end_turn", stop_sequence: null, usage: {…} }
 */
export function chatToMessages(
  reply: ChatReplyJson,
  options: ChatToMessagesOptions,
): MessagesResponse {
  const parsed = readChatReply(reply);
  const choice = parsed.choices[0]!;
  const content = contentBlocks(choice.message, options.callId);
  return {
    id: messageId(options.callId),
    type: "message",
    role: "assistant",
    model: options.model,
    content,
    ...stopReason(choice, content, options.stopSequences ?? []),
    usage: {
      input_tokens: parsed.usage?.prompt_tokens ?? 0,
      output_tokens: parsed.usage?.completion_tokens ?? 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
  };
}
