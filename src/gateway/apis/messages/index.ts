/**
 * @module The Anthropic Messages API on the gateway, as pure translations: a request body to ONE
 * normalised chat-completions body, the session's chat completion back to a Messages response or
 * to the API's SSE event sequence, and failures to the API's error shape. Follows the reference
 * at https://docs.anthropic.com/en/api/messages, the streaming page
 * https://docs.anthropic.com/en/docs/build-with-claude/streaming, count_tokens at
 * https://docs.anthropic.com/en/api/messages-count-tokens and errors at
 * https://docs.anthropic.com/en/api/errors. The routes import from here only.
 *
 * @example
 * const parsed = parseMessagesRequest(body);
 * if (!parsed.ok) return Response.json(parsed.error.body, { status: parsed.error.status });
 * const { chat, stream, requestedModel } = messagesToChat(parsed.request);
 * const reply = session.call(chat); // one whole chat completion
 * const options = { model: requestedModel, callId, stopSequences: parsed.request.stop_sequences };
 * return stream
 *   ? new Response(messagesEventStream(reply, options), { headers: { "content-type": "text/event-stream" } })
 *   : Response.json(chatToMessages(await reply, options));
 */
export {
  anthropicError,
  anthropicErrorOf,
  type AnthropicError,
  type AnthropicErrorBody,
  type AnthropicErrorType,
} from "./anthropic-error";
export { ChatReply, UnusableReplyError, type ChatReplyJson } from "../chat-reply";
export { KEEPALIVE, messagesEventStream, type MessagesEventStreamOptions } from "./event-stream";
export { messageEvents, sseText, type MessagesEvent } from "./message-events";
export {
  ContentBlock,
  MessageParam,
  MessagesCountTokensRequest,
  MessagesRequest,
  ThinkingConfig,
  ToolChoice,
  ToolParam,
} from "./messages-request";
export {
  parseMessagesCountTokensRequest,
  parseMessagesRequest,
  type ParsedRequest,
} from "./parse-request";
export {
  chatToMessages,
  messageId,
  type ChatToMessagesOptions,
  type MessagesResponse,
  type ResponseBlock,
  type StopReason,
} from "./reply-to-messages";
export {
  messagesToChat,
  type ChatTranslation,
  type MessagesToChatOptions,
} from "./request-to-chat";
