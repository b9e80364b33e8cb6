/**
 * @module A Messages (or count_tokens) request as ONE normalised chat-completions body, the form
 * the rollout's session runs and stores. Only what changes the policy's answer is kept, in a fixed
 * key order; the rest of the body (metadata, beta fields, `cache_control`) is dropped, so the same
 * conversation gives the same chat messages on every call and each call's messages extend the
 * previous call's.
 */
import type { JsonObject, JsonValue } from "../../../schemas/json";
import { contentText } from "./content-text";
import { messageToChat } from "./message-to-chat";
import type {
  MessagesCountTokensRequest,
  MessagesRequest,
  ToolChoice,
  ToolParam,
} from "./messages-request";

/** Options of `messagesToChat`. */
export interface MessagesToChatOptions {
  /** The `model` of the chat body. Default: the model the harness asked for (the session maps any name to the policy's). */
  model?: string;
}

/** A translated request. */
export interface ChatTranslation {
  /** The chat-completions body, always `stream: false`: the gateway streams from the whole reply. */
  chat: JsonObject;
  /** Whether the harness asked for a stream (`stream: true`); false for count_tokens. */
  stream: boolean;
  /** The `model` the harness sent, to be echoed in the reply. */
  requestedModel: string;
}

/** A function tool for each client tool; server tools (`type` other than `custom`) are dropped. */
function chatTools(tools: readonly ToolParam[]): JsonObject[] {
  const chat: JsonObject[] = [];
  for (const tool of tools) {
    if (tool.type !== undefined && tool.type !== "custom") continue;
    const fn: JsonObject = { name: tool.name };
    if (tool.description !== undefined) fn.description = tool.description;
    fn.parameters = tool.input_schema ?? { type: "object" };
    chat.push({ type: "function", function: fn });
  }
  return chat;
}

/** Chat's `tool_choice` for the API's: `any` is chat's `required`. */
function chatToolChoice(choice: ToolChoice): JsonValue {
  switch (choice.type) {
    case "auto":
      return "auto";
    case "any":
      return "required";
    case "none":
      return "none";
    case "tool":
      return { type: "function", function: { name: choice.name } };
  }
}

/**
 * Claude Code's first system block, `x-anthropic-billing-header: cc_version=…; cc_entrypoint=…;`,
 * is a marker for Anthropic's billing, not instructions: it is not shown to the policy.
 */
const BILLING_HEADER = "x-anthropic-billing-header:";

/** The system prompt's text, without the billing marker. */
function systemText(system: NonNullable<MessagesCountTokensRequest["system"]>): string {
  if (typeof system === "string") return system;
  return contentText(system.filter((block) => !block.text.startsWith(BILLING_HEADER)));
}

/** The chat messages: the system prompt first (when not empty), then each message in order. */
function chatMessages(request: MessagesCountTokensRequest): JsonObject[] {
  const messages: JsonObject[] = [];
  if (request.system !== undefined) {
    const system = systemText(request.system);
    if (system !== "") messages.push({ role: "system", content: system });
  }
  for (const message of request.messages) messages.push(...messageToChat(message));
  return messages;
}

/**
 * Translates a checked Messages body (or a count_tokens body, which has no sampling fields) into
 * a chat-completions body. Kept: model, messages, tools (client tools only; with `tool_choice`),
 * max_tokens, temperature, top_p, top_k, stop (from `stop_sequences`), and
 * `chat_template_kwargs: {enable_thinking: false}` when thinking is `disabled` (enabled, adaptive
 * or absent leave the template's default; the thinking budget is not passed on).
 * @example
 * messagesToChat({ model: "claude-x", max_tokens: 64, messages: [{ role: "user", content: "hi" }] })
 * // { chat: { model: "claude-x", messages: [{ role: "user", content: "hi" }], max_tokens: 64, stream: false },
 * //   stream: false, requestedModel: "claude-x" }
 */
export function messagesToChat(
  request: MessagesRequest | MessagesCountTokensRequest,
  options: MessagesToChatOptions = {},
): ChatTranslation {
  const sampling: Partial<MessagesRequest> = request;
  const chat: JsonObject = {
    model: options.model ?? request.model,
    messages: chatMessages(request),
  };
  const tools = chatTools(request.tools ?? []);
  if (tools.length > 0) {
    chat.tools = tools;
    if (request.tool_choice !== undefined) chat.tool_choice = chatToolChoice(request.tool_choice);
  }
  if (sampling.max_tokens !== undefined) chat.max_tokens = sampling.max_tokens;
  if (sampling.temperature !== undefined) chat.temperature = sampling.temperature;
  if (sampling.top_p !== undefined) chat.top_p = sampling.top_p;
  if (sampling.top_k !== undefined) chat.top_k = sampling.top_k;
  if (sampling.stop_sequences !== undefined && sampling.stop_sequences.length > 0)
    chat.stop = sampling.stop_sequences;
  if (request.thinking?.type === "disabled") chat.chat_template_kwargs = { enable_thinking: false };
  chat.stream = false;
  return { chat, stream: sampling.stream === true, requestedModel: request.model };
}
