/**
 * @module A whole chat completion as a Responses `response` object
 * (https://platform.openai.com/docs/api-reference/responses/object). Besides the output, the
 * object echoes the request's settings (instructions, tools, tool_choice, sampling), as the real
 * API does and as OpenAI's SDKs type it; harnesses read `id`, `status`, `output` and `usage`.
 */
import type { JsonObject, JsonValue } from "../../../schemas/json";
import { type ChatReply, type ChatReplyJson, readChatReply } from "../chat-reply";
import { idStem, type OutputItem, replyOutputItems } from "./output-items";
import type { ResponsesRequest } from "./request-schema";
import { toolKinds } from "./tools-to-chat";

/** What a Responses answer needs besides the reply. */
export interface ResponseContext {
  /** The model the caller named (echoed, whatever policy served it). */
  model: string;
  /** The gateway's id of this model call: ids and the turn reference derive from it. */
  callId: string;
  /** The parsed request, for the echoed settings and its tool kinds. */
  request: ResponsesRequest;
  /** Unix seconds of creation; default now. */
  createdAt?: number;
}

/** Status and the fields that go with it. */
export interface ResponseState {
  status: "in_progress" | "completed" | "incomplete" | "failed";
  output: OutputItem[];
  usage: JsonObject | null;
  error?: { code: string; message: string } | null;
  incompleteReason?: "max_output_tokens" | "content_filter";
}

function echoed(value: unknown, fallback: JsonValue): JsonValue {
  return value === undefined || value === null ? fallback : (value as JsonValue);
}

/** The Responses `response` object for `state`, with the request's settings echoed. */
export function responseObject(context: ResponseContext, state: ResponseState): JsonObject {
  const { request } = context;
  return {
    id: `resp_${idStem(context.callId)}`,
    object: "response",
    created_at: context.createdAt ?? Math.floor(Date.now() / 1000),
    status: state.status,
    error: state.error ?? null,
    incomplete_details: state.incompleteReason ? { reason: state.incompleteReason } : null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model: context.model,
    output: state.output,
    parallel_tool_calls: echoed(request.parallel_tool_calls, true),
    previous_response_id: null,
    reasoning: echoed(request.reasoning, { effort: null, summary: null }),
    store: false,
    temperature: request.temperature ?? 1,
    text: echoed(request.text, { format: { type: "text" } }),
    tool_choice: echoed(request.tool_choice, "auto"),
    tools: echoed(request.tools, []),
    top_p: request.top_p ?? 1,
    truncation: "disabled",
    usage: state.usage,
    metadata: echoed(request.metadata, {}),
  };
}

/** Chat usage as Responses usage; the backend reports no cache or reasoning split, so those are 0. */
export function responsesUsage(reply: ChatReply): JsonObject {
  const input = reply.usage?.prompt_tokens ?? 0;
  const output = reply.usage?.completion_tokens ?? 0;
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: reply.usage?.total_tokens ?? input + output,
  };
}

/** `finish_reason` as a Responses status: `length` and `content_filter` make it incomplete. */
function finalState(reply: ChatReply): Pick<ResponseState, "status" | "incompleteReason"> {
  const reason = reply.choices[0]?.finish_reason;
  if (reason === "length") return { status: "incomplete", incompleteReason: "max_output_tokens" };
  if (reason === "content_filter")
    return { status: "incomplete", incompleteReason: "content_filter" };
  return { status: "completed" };
}

/**
 * The finished state for a reply: its status, output items and usage. Throws
 * `UnusableReplyError` (status 502) when the reply is not a chat completion.
 */
export function finishedState(json: ChatReplyJson, context: ResponseContext): ResponseState {
  const reply = readChatReply(json);
  const final = finalState(reply);
  const output = replyOutputItems(reply, {
    callId: context.callId,
    kinds: toolKinds(context.request.tools),
    incomplete: final.status === "incomplete",
  });
  return { ...final, output, usage: responsesUsage(reply) };
}

/**
 * A whole chat completion as the Responses `response` object: status `completed`, or
 * `incomplete` with `incomplete_details.reason` "max_output_tokens" when it hit its token limit.
 * Never throws on what the model wrote (bad tool-call JSON stays a `function_call` with the raw
 * string); throws `UnusableReplyError` (502) when `reply` is not a chat completion at all.
 * @example chatToResponses(reply, { model: "gpt-5", callId: "c1", request }).status // "completed"
 */
export function chatToResponses(reply: ChatReplyJson, context: ResponseContext): JsonObject {
  const state = finishedState(reply, context);
  const created = reply.created;
  const createdAt = context.createdAt ?? (typeof created === "number" ? created : undefined);
  return responseObject({ ...context, createdAt }, state);
}
