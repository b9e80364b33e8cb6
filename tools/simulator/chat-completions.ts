/**
 * @module `POST /v1/chat/completions`: validate like vLLM, render the prompt, generate `n` choices
 * with the script, then answer in one JSON body or as a paced SSE stream
 * (`chat-stream.ts`). Field for field as vllm/entrypoints/openai/chat_completion/protocol.py
 * serialises them; see docs/vllm.md for the version switches in `compat`.
 */
import { type ChatGeneration, answerMessage, chatUsage, promptTextField } from "./chat-answer";
import {
  type ChatChoice,
  choiceSeed,
  parseChoice,
  planChoice,
  toolParsingOf,
} from "./chat-choices";
import type { RequestScope, SimulatorContext } from "./context";
import { logprobSeed } from "./continuation";
import { checkContextLength, modelValidatorError } from "./errors";
import type { EngineRequest, EngineRequestSpec } from "./engine/engine-loop";
import { generationSeed } from "./outcome-seed";
import { parseBody } from "./http-io";
import { chatLogprobEntries } from "./logprobs";
import { admitPdRequest, prefillHandle } from "./pd-handshake";
import type { ScriptTurn, ToolMode } from "./scripted-answers";
import { ChatCompletionRequest, contentText } from "./request-schemas";
import {
  checkMaxTokens,
  checkModel,
  checkStopCount,
  checkStreamOptions,
  responseId,
} from "./request-checks";
import { samplingParamsOf } from "./sampling-params";
import { requestMetrics } from "./request-metrics";
import { sequenceSpecs, serveGeneration } from "./served-scope";
import { streamChatCompletion } from "./chat-stream";
import { reasoningModeOf } from "./reasoning-split";
import { tokenizerFor } from "./tokenizer-registry";

function toolModeOf(request: ChatCompletionRequest): ToolMode {
  const choice = request.tool_choice;
  if (choice === null || choice === undefined) return request.tools?.length ? "auto" : "none";
  return typeof choice === "string" ? choice : { name: choice.function.name };
}

/** ChatCompletionRequest.check_tool_usage and check_logprobs (request-model validators). */
function checkRequestModel(request: ChatCompletionRequest): void {
  checkStreamOptions(request.stream, request.stream_options);
  checkStopCount(request.stop);
  if (request.top_logprobs && !request.logprobs)
    throw modelValidatorError(
      "when using `top_logprobs`, `logprobs` must be set to true.",
      "top_logprobs",
    );
  if (request.tools?.length === 0 && request.tool_choice !== "required") {
    throw modelValidatorError(
      "`tools` must not be an empty array. Either provide at least one tool or omit the field entirely.",
      "tools",
    );
  }
  const choice = request.tool_choice;
  if (choice === null || choice === undefined || choice === "none") return;
  if (!request.tools)
    throw modelValidatorError("When using `tool_choice`, `tools` must be set.", "tool_choice");
  if (
    typeof choice !== "string" &&
    !request.tools.some((tool) => tool.function.name === choice.function.name)
  ) {
    throw modelValidatorError(
      "The tool specified in `tool_choice` does not match any of the specified `tools`",
      "tool_choice",
    );
  }
}

/**
 * Whether this request's answer starts with a `<think>` block: `chat_template_kwargs.enable_thinking`
 * when sent (Qwen3's template switch), else Qwen3's soft switch (the most recent `/think` or
 * `/no_think` in a user or system message: Qwen3 follows the latest instruction of a multi-turn
 * chat), else the server's `thinking` setting.
 */
function thinkingFor(
  request: ChatCompletionRequest,
  turns: readonly ScriptTurn[],
  thinking: boolean,
): boolean {
  const enabled = request.chat_template_kwargs?.enable_thinking;
  if (typeof enabled === "boolean") return enabled;
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i]!;
    if (turn.role !== "user" && turn.role !== "system") continue;
    const switches = [...turn.content.matchAll(/(?:^|\s)\/(no_think|think)\b/g)];
    const last = switches.at(-1)?.[1];
    if (last !== undefined) return last === "think";
  }
  return thinking;
}

function turnsOf(request: ChatCompletionRequest): ScriptTurn[] {
  return request.messages.map((message) => ({
    role: message.role === "developer" ? "system" : message.role,
    content: contentText(message.content),
  }));
}

/** Validates the request and generates its choices (shared by both answer modes). */
function prepareChatGeneration(
  body: unknown,
  scope: RequestScope,
  context: SimulatorContext,
): { chat: ChatGeneration; specs: Array<Omit<EngineRequestSpec, "onToken">> } {
  const { config } = scope;
  const request = parseBody(ChatCompletionRequest, body);
  checkModel(request.model, config.model);
  checkRequestModel(request);
  const maxTokens = request.max_completion_tokens ?? request.max_tokens ?? null;
  checkMaxTokens(
    maxTokens,
    request.max_completion_tokens != null ? "max_completion_tokens" : "max_tokens",
  );
  if (request.tools?.length === 0) request.tools = null; // "required" with no tools behaves as "none"

  const tokenizer = tokenizerFor(config.tokenizer);
  const promptIds = tokenizer.renderChat(request.messages, {
    tools: request.tools,
    addGenerationPrompt: request.add_generation_prompt,
    chatTemplateKwargs: request.chat_template_kwargs,
    stripThinkInHistory: config.stripThinkInHistory,
  });
  checkContextLength(config.maxModelLen, promptIds.length, maxTokens);
  const pd = admitPdRequest(config.role, request, promptIds, context.stats);

  const toolMode = toolModeOf(request);
  const parsing = toolParsingOf(toolMode, request.tools?.length ?? 0);
  const seed = generationSeed(
    config.seed,
    request,
    context.nextRequestNumber(),
    promptIds,
    scope.sampleKey,
  );
  const turns = turnsOf(request);
  const asked = {
    turns,
    toolNames: (request.tools ?? []).map((tool) => tool.function.name),
    toolMode,
    thinking: thinkingFor(request, turns, config.thinking),
    tools: request.tools ?? [],
    sampleKey: scope.sampleKey,
  };
  const params = samplingParamsOf(
    request,
    maxTokens ?? config.maxModelLen - promptIds.length,
    request.logprobs ? (request.top_logprobs ?? 0) : 0,
  );
  const choices = Array.from({ length: request.n ?? 1 }, (_, index): ChatChoice => {
    const choice = choiceSeed(seed, index, request.temperature);
    return {
      index,
      seed: logprobSeed(choice, config.policyVersion),
      scriptSeed: choice,
      bodyIds: planChoice(asked, config, parsing, choice),
      generation: NOT_SERVED,
    };
  });
  const specs = sequenceSpecs(
    scope,
    { promptIds, salt: request.cache_salt, params, tokenizer, positionOffset: 0 },
    choices,
  );
  const id = responseId("chatcmpl", scope.requestIdHeader, request.request_id);
  return { chat: { request, id, promptIds, choices, parsing, pd }, specs };
}

/** A choice's generation before the engine served it. */
const NOT_SERVED: ChatChoice["generation"] = {
  tokenIds: [],
  logprobs: [],
  finishReason: "abort",
  stopReason: null,
  text: "",
  textDeltas: [],
  streamDeltas: [],
};

/** The non-streaming response body, field for field as vLLM serialises it. */
function chatCompletionBody(
  chat: ChatGeneration,
  scope: RequestScope,
  context: SimulatorContext,
  served: readonly EngineRequest[],
): Record<string, unknown> {
  const { request } = chat;
  const { config } = scope;
  const tokenizer = tokenizerFor(config.tokenizer);
  const mode = reasoningModeOf(config, request.chat_template_kwargs);
  const parsed = chat.choices.map((choice) =>
    parseChoice(
      tokenizer,
      choice.generation,
      chat.parsing,
      mode,
      request.include_reasoning !== false,
    ),
  );
  const completionTokens = chat.choices.reduce(
    (sum, choice) => sum + choice.generation.tokenIds.length,
    0,
  );
  const reasoningTokens = config.reasoningParser
    ? parsed.reduce((sum, p) => sum + p.reasoningTokens, 0)
    : null;
  const first = chat.choices[0]!.generation;
  const handle =
    chat.pd === "prefill"
      ? prefillHandle(
          {
            engine: context.engine(),
            promptIds: chat.promptIds,
            requestId: chat.id,
            finishReason: first.finishReason,
          },
          config.compat,
        )
      : null;
  const metrics = requestMetrics(config, request, served);
  return {
    id: chat.id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: config.model,
    choices: chat.choices.map((choice, i) => ({
      index: choice.index,
      message: answerMessage(parsed[i]!, scope),
      logprobs: request.logprobs
        ? {
            content: chatLogprobEntries(
              tokenizer,
              choice.generation.logprobs,
              request.top_logprobs ?? 0,
            ),
          }
        : null,
      finish_reason: parsed[i]!.finishReason,
      stop_reason: choice.generation.stopReason,
      token_ids: request.return_token_ids ? choice.generation.tokenIds : null,
    })),
    service_tier: null,
    system_fingerprint: null,
    usage: chatUsage(chat, completionTokens, reasoningTokens),
    prompt_logprobs: null,
    prompt_token_ids: request.return_token_ids ? chat.promptIds : null,
    ...promptTextField(chat, scope),
    kv_transfer_params: handle,
    ...(metrics ? { metrics } : {}),
  };
}

/** Answers one chat-completions request. */
export async function handleChatCompletions(
  body: unknown,
  scope: RequestScope,
  context: SimulatorContext,
): Promise<void> {
  const { chat, specs } = prepareChatGeneration(body, scope, context);
  const served = (requests: readonly EngineRequest[]) =>
    chat.choices.forEach((choice, i) => (choice.generation = requests[i]!.output.generation()));
  const { requests, clientGone } = await serveGeneration(
    context,
    scope,
    { promptIds: chat.promptIds, streamed: Boolean(chat.request.stream), choices: specs },
    {
      stream: (requests) => streamChatCompletion(chat, scope, context, requests),
      body: (requests) => {
        served(requests);
        return chatCompletionBody(chat, scope, context, requests);
      },
    },
  );
  if (!clientGone) return;
  // Remembered for a resume from token ids (continuation.ts).
  chat.choices.forEach((choice, i) => {
    const produced = requests[i]?.output.ids ?? [];
    context.interrupted.record(chat.promptIds, choice.scriptSeed, produced);
  });
}
