/**
 * @module Request bodies the simulator accepts, as zod schemas mirroring vLLM's pydantic models.
 * Objects are loose because vLLM ignores (and only logs) fields it does not know.
 */
import { z } from "zod";

/** A `{"type": "text", "text": …}` content part; the simulator is text-only. */
export const TextPart = z.looseObject({ type: z.literal("text"), text: z.string() });
export type TextPart = z.infer<typeof TextPart>;

/** Message content: a string or a list of text parts. */
export const MessageContent = z.union([z.string(), z.array(TextPart)]);
export type MessageContent = z.infer<typeof MessageContent>;

/** A tool call inside an assistant message of the history. */
export const ToolCallParam = z.looseObject({
  id: z.string().nullish(),
  type: z.literal("function").nullish(),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});
export type ToolCallParam = z.infer<typeof ToolCallParam>;

/** One chat message (system, developer, user, assistant or tool). */
export const ChatMessageParam = z.discriminatedUnion("role", [
  z.looseObject({ role: z.literal("system"), content: MessageContent }),
  z.looseObject({ role: z.literal("developer"), content: MessageContent }),
  z.looseObject({ role: z.literal("user"), content: MessageContent }),
  z.looseObject({
    role: z.literal("assistant"),
    content: MessageContent.nullish(),
    tool_calls: z.array(ToolCallParam).nullish(),
    /** Qwen3's template renders it as the turn's think block (when the turn keeps one). */
    reasoning_content: z.string().nullish(),
  }),
  z.looseObject({ role: z.literal("tool"), content: MessageContent, tool_call_id: z.string() }),
]);
export type ChatMessageParam = z.infer<typeof ChatMessageParam>;

/** A function tool offered to the model. */
export const ToolParam = z.looseObject({
  type: z.literal("function").default("function"),
  function: z.looseObject({
    name: z.string().min(1),
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
  }),
});
export type ToolParam = z.infer<typeof ToolParam>;

/** `tool_choice`: a mode or one named function. */
export const ToolChoiceParam = z.union([
  z.enum(["none", "auto", "required"]),
  z.looseObject({
    type: z.literal("function").default("function"),
    function: z.looseObject({ name: z.string() }),
  }),
]);
export type ToolChoiceParam = z.infer<typeof ToolChoiceParam>;

/** `stream_options`. */
export const StreamOptions = z.looseObject({
  include_usage: z.boolean().nullish(),
  continuous_usage_stats: z.boolean().nullish(),
});
export type StreamOptions = z.infer<typeof StreamOptions>;

const sampling = {
  model: z.string().nullish(),
  temperature: z.number().min(0).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  seed: z.int().nullish(),
  n: z.int().min(1).nullish(),
  stop: z.union([z.string(), z.array(z.string())]).nullish(),
  stream: z.boolean().nullish(),
  stream_options: StreamOptions.nullish(),
  return_token_ids: z.boolean().nullish(),
  /** Becomes the response id when no X-Request-Id header is sent. */
  request_id: z.string().nullish(),
  /** Per-request timing metrics (vLLM PR #46768), answered only with `--enable-per-request-metrics`. */
  include_metrics: z.boolean().nullish(),
  /** vLLM's `ignore_eos`: generate to max_tokens, past EOS (benchmarks ask for long completions with it). */
  ignore_eos: z.boolean().nullish(),
  /** vLLM's `min_tokens`: EOS and `stop_token_ids` cannot end the answer before this many tokens. */
  min_tokens: z.int().min(0).nullish(),
  /** vLLM's `stop_token_ids`: generation ends on any of these ids (the id becomes `stop_reason`). */
  stop_token_ids: z.array(z.int().min(0)).nullish(),
  /** vLLM's `top_k` (-1 or 0: off); passed to the token source. */
  top_k: z.int().min(-1).nullish(),
  /** vLLM's `include_stop_str_in_output`: a matched stop string stays in the text (and no text is held back while streaming). */
  include_stop_str_in_output: z.boolean().nullish(),
  // Accepted for disaggregated-serving clients; the simulator has no KV cache to transfer.
  kv_transfer_params: z.record(z.string(), z.unknown()).nullish(),
  /** vLLM's prefix-cache salt: mixed into the first block's hash, so differently salted requests share no cached block. */
  cache_salt: z
    .string()
    .min(1, "Parameter 'cache_salt' must be a non-empty string if provided.")
    .nullish(),
};

/** Body of `POST /v1/chat/completions`. */
export const ChatCompletionRequest = z.looseObject({
  ...sampling,
  messages: z.array(ChatMessageParam).min(1),
  tools: z.array(ToolParam).nullish(),
  tool_choice: ToolChoiceParam.nullish(),
  max_tokens: z.int().nullish(),
  max_completion_tokens: z.int().nullish(),
  logprobs: z.boolean().nullish(),
  top_logprobs: z.int().min(0).max(20).nullish(),
  add_generation_prompt: z.boolean().nullish(),
  /** With a reasoning parser, false drops the reasoning from the answer. */
  include_reasoning: z.boolean().nullish(),
  /** Extra chat-template variables; Qwen3's template reads `enable_thinking`. */
  chat_template_kwargs: z.record(z.string(), z.unknown()).nullish(),
});
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

/** Body of `POST /v1/completions` (one prompt: text or token ids). */
export const CompletionRequest = z.looseObject({
  ...sampling,
  prompt: z.union([z.string(), z.array(z.int().min(0))]),
  max_tokens: z.int().nullish(),
  logprobs: z.int().min(0).max(20).nullish(),
  echo: z.boolean().nullish(),
});
export type CompletionRequest = z.infer<typeof CompletionRequest>;

/** Body of `POST /tokenize`: a chat (rendered with the template) or a plain prompt. */
export const TokenizeRequest = z.union([
  z.looseObject({
    model: z.string().nullish(),
    messages: z.array(ChatMessageParam),
    add_generation_prompt: z.boolean().nullish(),
    tools: z.array(ToolParam).nullish(),
    chat_template_kwargs: z.record(z.string(), z.unknown()).nullish(),
    return_token_strs: z.boolean().nullish(),
  }),
  z.looseObject({
    model: z.string().nullish(),
    prompt: z.string(),
    add_special_tokens: z.boolean().nullish(),
    return_token_strs: z.boolean().nullish(),
  }),
]);
export type TokenizeRequest = z.infer<typeof TokenizeRequest>;

/** Body of `POST /detokenize`. */
export const DetokenizeRequest = z.looseObject({
  model: z.string().nullish(),
  tokens: z.array(z.int().min(0)),
});
export type DetokenizeRequest = z.infer<typeof DetokenizeRequest>;

/** Plain text of message content; text parts are joined with newlines, as vLLM's "string" content format does. */
export function contentText(content: MessageContent | null | undefined): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content.map((part) => part.text).join("\n");
}
