/**
 * @module The parts of a chat answer both modes share: the request's generated choices, the
 * assistant message with vLLM's field presence for the server's version, usage and prompt_text.
 */
import type { ChatChoice, ParsedChoice, ToolParsing } from "./chat-choices";
import type { RequestScope } from "./context";
import type { PdAdmission } from "./pd-handshake";
import { reasoningFields } from "./reasoning-split";
import type { ChatCompletionRequest } from "./request-schemas";
import { decodeIds } from "./sim-tokenizer";
import { tokenizerFor } from "./tokenizer-registry";

/** Everything both answer modes need about one chat request. */
export interface ChatGeneration {
  request: ChatCompletionRequest;
  id: string;
  promptIds: number[];
  choices: ChatChoice[];
  parsing: ToolParsing;
  pd: PdAdmission;
}

/** The assistant message of one parsed choice, with vLLM's field presence for the server's version. */
export function answerMessage(parsed: ParsedChoice, scope: RequestScope): Record<string, unknown> {
  const { compat, reasoningParser } = scope.config;
  const message: Record<string, unknown> = {
    role: "assistant",
    content: parsed.content,
    refusal: null,
    annotations: null,
    audio: null,
    function_call: null,
  };
  if (parsed.toolCalls.length > 0 || compat.emptyToolCallsList)
    message.tool_calls = parsed.toolCalls;
  return { ...message, ...reasoningFields(reasoningParser ? parsed.reasoning : null, compat) };
}

/** `usage`, with `completion_tokens_details.reasoning_tokens` when a reasoning parser runs. */
export function chatUsage(
  chat: ChatGeneration,
  completionTokens: number,
  reasoningTokens: number | null,
): Record<string, unknown> {
  const prompt = chat.promptIds.length;
  const usage: Record<string, unknown> = {
    prompt_tokens: prompt,
    total_tokens: prompt + completionTokens,
    completion_tokens: completionTokens,
    prompt_tokens_details: null,
  };
  if (reasoningTokens !== null)
    usage.completion_tokens_details = { reasoning_tokens: reasoningTokens };
  return usage;
}

/** The prompt as the template rendered it (vLLM PR #42052), sent with `return_token_ids`. */
export function promptTextField(chat: ChatGeneration, scope: RequestScope): Record<string, string> {
  return chat.request.return_token_ids && scope.config.compat.promptText
    ? { prompt_text: decodeIds(tokenizerFor(scope.config.tokenizer), chat.promptIds) }
    : {};
}
