/**
 * @module A Responses request as ONE normalised chat-completions body, the form the rollout's
 * session runs (https://platform.openai.com/docs/api-reference/responses/create →
 * https://platform.openai.com/docs/api-reference/chat/create). The body is always `stream: false`:
 * the route streams the Responses events itself from the whole reply. Keys are written in one
 * fixed order and absent values left out, so the same conversation serialises to the same bytes.
 */
import type { JsonObject } from "../../../schemas/json";
import { inputToMessages } from "./input-to-messages";
import type { ResponsesRequest } from "./request-schema";
import { toolChoiceToChat, toolKinds, toolsToChat } from "./tools-to-chat";

/** A Responses request translated: the chat body, whether the caller wants SSE, and the model it named. */
export interface ResponsesAsChat {
  /** `{ model, messages, tools?, tool_choice?, max_tokens?, temperature?, top_p?, stop?, stream: false }`. */
  chat: JsonObject;
  /** Whether the caller asked for the Responses event stream. */
  stream: boolean;
  /** The model the caller named, echoed in the answer whatever policy serves it. */
  requestedModel: string;
}

/**
 * The chat-completions body for a parsed Responses request (see `parseResponsesRequest`).
 * `max_output_tokens` becomes `max_tokens`; unknown and store-free fields are dropped.
 * @example responsesToChat(parseResponsesRequest({ model: "m", input: "hi" })).chat
 * // { model: "m", messages: [{ role: "user", content: "hi" }], stream: false }
 */
export function responsesToChat(request: ResponsesRequest): ResponsesAsChat {
  const chat: JsonObject = {
    model: request.model,
    messages: inputToMessages(request.input, request.instructions),
  };
  const tools = toolsToChat(request.tools);
  if (tools) {
    chat.tools = tools;
    const choice = toolChoiceToChat(request.tool_choice, toolKinds(request.tools));
    if (choice !== undefined) chat.tool_choice = choice;
  }
  if (typeof request.max_output_tokens === "number") chat.max_tokens = request.max_output_tokens;
  if (typeof request.temperature === "number") chat.temperature = request.temperature;
  if (typeof request.top_p === "number") chat.top_p = request.top_p;
  if (request.stop !== null && request.stop !== undefined) chat.stop = request.stop;
  chat.stream = false;
  return { chat, stream: request.stream === true, requestedModel: request.model };
}
