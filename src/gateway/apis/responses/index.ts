/**
 * @module The OpenAI Responses API (`POST …/llm/v1/responses`) translated to and from the
 * gateway's normalised chat completions: the request body and its 400s, the chat body the session
 * runs, and the reply as a `response` object or as the API's SSE events. Pure functions (no Hono,
 * no Worker imports). References: https://platform.openai.com/docs/api-reference/responses and
 * https://platform.openai.com/docs/api-reference/responses-streaming; exact shapes from the
 * `openai` npm package's `resources/responses/responses.d.ts`.
 *
 * A route uses it as: `parseResponsesRequest(body)` (throws `ResponsesRequestError`, answer it
 * with `.toResponse()`), `responsesToChat(request)`, run `chat` in the session, then
 * `chatToResponses(reply, …)` or `responsesEventStream(replyPromise, …)`; other failures answer
 * with `openaiError(status, message)`.
 */
export { chatToResponses, type ResponseContext } from "./chat-to-responses";
export { responsesEventStream, type ResponsesStreamOptions } from "./event-stream";
export {
  openaiError,
  type OpenAiErrorBody,
  type OpenAiErrorResponse,
  ResponsesRequestError,
} from "./openai-error";
export { type ChatReplyJson, UnusableReplyError } from "../chat-reply";
export type { OutputItem } from "./output-items";
export { parseResponsesRequest } from "./parse-request";
export { InputItem, ResponsesRequest } from "./request-schema";
export { type ResponsesAsChat, responsesToChat } from "./responses-to-chat";
