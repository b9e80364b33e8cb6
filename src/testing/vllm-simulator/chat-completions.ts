/**
 * @module `POST /v1/chat/completions`: validate like vLLM, render the prompt, run the scripted
 * policy, then answer in one JSON body or as a paced SSE stream (`chat-stream.ts`).
 */
import { renderChatPrompt } from "./chat-template";
import type { RequestScope, SimulatorContext } from "./context";
import { checkContextLength, validationError } from "./errors";
import { replyAfterLatency } from "./faults";
import { type Generation, generate, generationSeed } from "./generation";
import { parseHermesOutput, pythonJsonDumps } from "./hermes";
import { makeToolCallId } from "./hermes-stream";
import { admitPdRequest } from "./pd-handshake";
import { parseBody } from "./http-io";
import { chatLogprobEntries } from "./logprobs";
import { type PolicyTurn, type ToolMode, runPolicy } from "./policy";
import { ChatCompletionRequest, contentText } from "./request-schemas";
import { checkMaxTokens, checkModel, checkSingleChoice, checkStreamOptions, responseId, stopList } from "./request-checks";
import { createRng } from "./rng";
import { streamChatCompletion } from "./chat-stream";

/** Everything both answer modes need about one chat generation. */
export interface ChatGeneration {
  request: ChatCompletionRequest;
  promptIds: number[];
  generation: Generation;
  /** Seed of the deterministic logprobs. */
  seed: number;
  /** Whether the hermes parser runs (tools offered and tool_choice is not "none"). */
  parseTools: boolean;
  /** A named tool_choice finishes with "stop", not "tool_calls" (vLLM follows OpenAI here). */
  namedToolChoice: boolean;
  /** A prefill-role answer's handle for the decode server, else null. */
  kvTransferParams: Record<string, unknown> | null;
}

function toolModeOf(request: ChatCompletionRequest): ToolMode {
  const choice = request.tool_choice;
  if (choice === null || choice === undefined) return request.tools?.length ? "auto" : "none";
  return typeof choice === "string" ? choice : { name: choice.function.name };
}

function checkTools(request: ChatCompletionRequest): void {
  if (request.tools?.length === 0) {
    throw validationError("`tools` must not be an empty array. Either provide at least one tool or omit the field entirely.", "tools");
  }
  const choice = request.tool_choice;
  if (choice === null || choice === undefined || choice === "none") return;
  if (!request.tools) throw validationError("When using `tool_choice`, `tools` must be set.", "tool_choice");
  if (typeof choice !== "string" && !request.tools.some((tool) => tool.function.name === choice.function.name)) {
    throw validationError("The tool specified in `tool_choice` does not match any of the specified `tools`", "tool_choice");
  }
}

function turnsOf(request: ChatCompletionRequest): PolicyTurn[] {
  return request.messages.map((message) => ({
    role: message.role === "developer" ? "system" : message.role,
    content: contentText(message.content),
  }));
}

/** Validates the request and generates its completion (shared by both answer modes). */
function prepareChatGeneration(body: unknown, scope: RequestScope, context: SimulatorContext): ChatGeneration {
  const { config } = scope;
  const request = parseBody(ChatCompletionRequest, "ChatCompletionRequest", body);
  checkModel(request.model, config.model);
  checkSingleChoice(request.n);
  checkStreamOptions(request.stream, request.stream_options);
  checkTools(request);
  if (request.top_logprobs && !request.logprobs) {
    throw validationError("when using `top_logprobs`, `logprobs` must be set to true.", "top_logprobs");
  }
  const maxTokens = request.max_completion_tokens ?? request.max_tokens ?? null;
  checkMaxTokens(maxTokens, request.max_completion_tokens != null ? "max_completion_tokens" : "max_tokens");

  const promptIds = renderChatPrompt(request.messages, {
    tools: request.tools,
    addGenerationPrompt: request.add_generation_prompt,
    stripThinkInHistory: config.stripThinkInHistory,
  });
  checkContextLength(config.maxModelLen, promptIds.length, maxTokens);
  const kvTransferParams = admitPdRequest(config.role, request, promptIds, context.engine(), context.stats);

  const toolMode = toolModeOf(request);
  const seed = generationSeed(config.seed, request, context.nextRequestNumber(), promptIds);
  const output = runPolicy({
    turns: turnsOf(request),
    toolNames: (request.tools ?? []).map((tool) => tool.function.name),
    toolMode,
    rng: createRng(seed),
    successRate: config.successRate,
    thinking: config.thinking,
  });
  const generation = generate(output, {
    maxTokens: maxTokens ?? config.maxModelLen - promptIds.length,
    stop: stopList(request.stop),
  });
  return { request, promptIds, generation, seed, parseTools: toolMode !== "none" && Boolean(request.tools?.length), namedToolChoice: typeof toolMode === "object", kvTransferParams };
}

/** The non-streaming response body, field for field as vLLM serialises it. */
function chatCompletionBody(chat: ChatGeneration, model: string): Record<string, unknown> {
  const { request, generation, promptIds } = chat;
  const parsed = chat.parseTools ? parseHermesOutput(generation.text) : { content: generation.text, toolCalls: [] };
  const toolCalls = parsed.toolCalls.map((call) => ({
    id: makeToolCallId(),
    type: "function",
    function: { name: call.name, arguments: pythonJsonDumps(call.arguments) },
  }));
  const finishReason = toolCalls.length > 0 && !chat.namedToolChoice && generation.finishReason === "stop" ? "tool_calls" : generation.finishReason;
  const completionTokens = generation.tokenIds.length;
  return {
    id: responseId("chatcmpl"),
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: parsed.content,
          refusal: null,
          annotations: null,
          audio: null,
          function_call: null,
          tool_calls: toolCalls,
          // No reasoning parser runs, so <think> stays in content; both spellings vLLM has used are present.
          reasoning: null,
          reasoning_content: null,
        },
        logprobs: request.logprobs ? { content: chatLogprobEntries(chat.seed, generation.tokenIds, request.top_logprobs ?? 0) } : null,
        finish_reason: finishReason,
        stop_reason: generation.stopReason,
        token_ids: request.return_token_ids ? generation.tokenIds : null,
      },
    ],
    service_tier: null,
    system_fingerprint: null,
    usage: { prompt_tokens: promptIds.length, total_tokens: promptIds.length + completionTokens, completion_tokens: completionTokens, prompt_tokens_details: null },
    prompt_logprobs: null,
    prompt_token_ids: request.return_token_ids ? promptIds : null,
    kv_transfer_params: chat.kvTransferParams,
  };
}

/** Answers one chat-completions request. */
export async function handleChatCompletions(body: unknown, scope: RequestScope, context: SimulatorContext): Promise<void> {
  const chat = prepareChatGeneration(body, scope, context);
  context.stats.completion(chat.promptIds.length, chat.generation.tokenIds.length);
  if (chat.request.stream) {
    await streamChatCompletion(chat, scope, context);
    return;
  }
  await replyAfterLatency(scope, context, chat.generation.tokenIds.length, () => chatCompletionBody(chat, scope.config.model));
}
