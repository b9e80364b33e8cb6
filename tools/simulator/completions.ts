/**
 * @module `POST /v1/completions`: one prompt (text or token ids), `n` choices, `echo`. A prompt
 * in ChatML is read back into turns, so a client that renders chats itself gets the same scripted
 * behaviour. A prompt that ends inside an open assistant turn continues that turn (continuation.ts):
 * positions, tokens and logprobs carry on from the ids already written. No tool parser runs
 * here: tool calls stay in `text` as hermes blocks. Shapes follow
 * vllm/entrypoints/openai/completion/serving.py (`request_output_to_completion_response`).
 */
import { choiceSeed, isEmptyReply } from "./chat-choices";
import { readChatMlPrompt } from "./chatml-reader";
import type { RequestScope, SimulatorContext } from "./context";
import { checkContextLength, modelValidatorError } from "./errors";
import { serveGeneration } from "./served-scope";
import { logprobSeed, splitContinuation } from "./continuation";
import { type Generation, generateIds, generationSeed } from "./generation";
import { type SseWriter, pause, parseBody, startSse } from "./http-io";
import {
  type CompletionLogprobs,
  completionLogprobs,
  concatLogprobs,
  promptLogprobs,
} from "./logprobs";
import { type PdAdmission, admitPdRequest, prefillHandle } from "./pd-handshake";
import { CompletionRequest } from "./request-schemas";
import {
  checkMaxTokens,
  checkModel,
  checkStopCount,
  checkStreamOptions,
  checkTokenIds,
  responseId,
  stopList,
} from "./request-checks";
import { scriptedOutput } from "./script";
import { decodeIds } from "./sim-tokenizer";
import { tokenizerFor } from "./tokenizer-registry";

/** vLLM's CompletionRequest default for max_tokens. */
const DEFAULT_MAX_TOKENS = 16;

interface CompletionChoice {
  index: number;
  generation: Generation;
  /** Seed of the logprobs (the script's seed mixed with the weights version). */
  seed: number;
  /** Seed of the script, remembered when the generation is aborted. */
  scriptSeed: number;
}

interface PreparedCompletion {
  request: CompletionRequest;
  id: string;
  promptIds: number[];
  /** The prompt without the open assistant turn's ids (all of it for an ordinary prompt). */
  base: number[];
  /** Ids the open assistant turn already has; generation continues at position `prefix.length`. */
  prefix: number[];
  choices: CompletionChoice[];
  pd: PdAdmission;
  /** The config the request arrived under (its tokenizer decodes and scores the answer). */
  config: RequestScope["config"];
}

function prepare(
  body: unknown,
  scope: RequestScope,
  context: SimulatorContext,
): PreparedCompletion {
  const { config } = scope;
  const request = parseBody(CompletionRequest, body);
  checkModel(request.model, config.model);
  checkStreamOptions(request.stream, request.stream_options);
  checkStopCount(request.stop);
  if (request.prompt === "" || (Array.isArray(request.prompt) && request.prompt.length === 0)) {
    throw modelValidatorError(
      "Either prompt or prompt_embeds must be provided and non-empty.",
      "prompt",
    );
  }
  const maxTokens = request.max_tokens ?? DEFAULT_MAX_TOKENS;
  checkMaxTokens(maxTokens, "max_tokens");
  const tokenizer = tokenizerFor(config.tokenizer);
  const promptIds =
    typeof request.prompt === "string" ? tokenizer.encode(request.prompt) : request.prompt;
  checkTokenIds(tokenizer, promptIds, "prompt");
  checkContextLength(config.maxModelLen, promptIds.length, maxTokens);
  const pd = admitPdRequest(config.role, request, promptIds, context.stats);

  const { base, prefix } = splitContinuation(tokenizer, promptIds);
  const requestNumber = context.nextRequestNumber();
  const resumed =
    prefix.length > 0 && (request.n ?? 1) === 1
      ? context.interrupted.take(base, prefix)
      : undefined;
  const seed = resumed ?? generationSeed(config.seed, request, requestNumber, base);
  const read = readChatMlPrompt(decodeIds(tokenizer, base));
  const choices = Array.from({ length: request.n ?? 1 }, (_, index): CompletionChoice => {
    const choice = choiceSeed(seed, index, request.temperature);
    const output = isEmptyReply(config.emptyReplyRate, choice)
      ? undefined
      : scriptedOutput(
          {
            turns: read.turns,
            toolNames: read.toolNames,
            toolMode: read.toolNames.length > 0 ? "auto" : "none",
            thinking: config.thinking,
          },
          config,
          choice,
        );
    const body = output ? tokenizer.renderAssistantBody(output.content, output.toolCalls) : [];
    // A continued turn picks the script up where its ids stop (a script already over ends with
    // EOS at once); stop strings apply to the new text only, as vLLM checks the output, not the prompt.
    const generation = generateIds(tokenizer, body.slice(prefix.length), {
      maxTokens,
      stop: stopList(request.stop),
      includeStopStr: request.include_stop_str_in_output === true,
    });
    return {
      index,
      seed: logprobSeed(choice, config.policyVersion),
      scriptSeed: choice,
      generation,
    };
  });
  return {
    request,
    id: responseId("cmpl", scope.requestIdHeader, request.request_id),
    promptIds,
    base,
    prefix,
    choices,
    pd,
    config,
  };
}
function usage(promptTokens: number, completionTokens: number): Record<string, unknown> {
  return {
    prompt_tokens: promptTokens,
    total_tokens: promptTokens + completionTokens,
    completion_tokens: completionTokens,
    prompt_tokens_details: null,
  };
}

/**
 * What `echo` puts before the generated text: the prompt, or nothing when token ids are returned
 * (vLLM blanks the echoed text then, the ids already say it).
 */
function echoText(prepared: PreparedCompletion): string {
  const { request, promptIds } = prepared;
  if (!request.echo || request.return_token_ids) return "";
  return typeof request.prompt === "string"
    ? request.prompt
    : decodeIds(tokenizerFor(prepared.config.tokenizer), promptIds);
}

/** Logprobs of tokens `start..` of a choice, behind the prompt's when echoing from the start. */
function choiceLogprobs(
  prepared: PreparedCompletion,
  choice: CompletionChoice,
  start: number,
  end: number,
  offset: number,
): CompletionLogprobs | null {
  const { request, promptIds } = prepared;
  if (request.logprobs === null || request.logprobs === undefined) return null;
  const { tokenIds, textDeltas } = choice.generation;
  // Positions count from the start of the assistant turn, so a continued turn's logprobs carry on.
  const tokenizer = tokenizerFor(prepared.config.tokenizer);
  const own = completionLogprobs(
    tokenizer,
    choice.seed,
    tokenIds.slice(start, end),
    textDeltas.slice(start, end),
    request.logprobs,
    prepared.prefix.length + start,
    offset,
  );
  if (!request.echo || start > 0) return own;
  const prompt = promptLogprobs(tokenizer, choice.seed, promptIds, request.logprobs);
  return concatLogprobs(prompt, prompt.tokens.join("").length, own);
}

function completionBody(
  prepared: PreparedCompletion,
  scope: RequestScope,
  context: SimulatorContext,
): Record<string, unknown> {
  const { request, promptIds } = prepared;
  const echoed = echoText(prepared);
  const first = prepared.choices[0]!.generation;
  const handle =
    prepared.pd === "prefill"
      ? prefillHandle(
          {
            engine: context.engine(),
            promptIds,
            requestId: prepared.id,
            finishReason: first.finishReason,
          },
          scope.config.compat,
        )
      : null;
  return {
    id: prepared.id,
    object: "text_completion",
    created: Math.floor(Date.now() / 1000),
    model: scope.config.model,
    choices: prepared.choices.map((choice) => ({
      index: choice.index,
      text: echoed + choice.generation.text,
      logprobs: choiceLogprobs(prepared, choice, 0, choice.generation.tokenIds.length, 0),
      finish_reason: choice.generation.finishReason,
      stop_reason: choice.generation.stopReason,
      token_ids: request.return_token_ids ? choice.generation.tokenIds : null,
      prompt_logprobs: null,
      prompt_token_ids: request.return_token_ids ? promptIds : null,
    })),
    service_tier: null,
    system_fingerprint: null,
    usage: usage(
      promptIds.length,
      prepared.choices.reduce((sum, choice) => sum + choice.generation.tokenIds.length, 0),
    ),
    kv_transfer_params: handle,
  };
}

/** Streams the answer; null when it ended, else the positions generated before the client left. */
async function stream(
  prepared: PreparedCompletion,
  scope: RequestScope,
  context: SimulatorContext,
): Promise<number | null> {
  const { request, promptIds } = prepared;
  const { latency, model } = scope.config;
  const head = {
    id: prepared.id,
    object: "text_completion",
    created: Math.floor(Date.now() / 1000),
    model,
  };
  const sse = startSse(scope.res);
  const echoed = echoText(prepared);
  const offsets = prepared.choices.map(() => 0);
  const longest = Math.max(...prepared.choices.map((choice) => choice.generation.tokenIds.length));
  for (let i = 0; i < longest; i++) {
    if (!(await pause(i === 0 ? latency.ttftMs : latency.perTokenMs, scope.signal)))
      return aborted(sse, i);
    for (const choice of prepared.choices) {
      const ids = choice.generation.tokenIds;
      if (i >= ids.length) continue;
      const delta = (i === 0 ? echoed : "") + (choice.generation.streamDeltas[i] ?? "");
      const last = i === ids.length - 1;
      const chunkChoice = {
        index: choice.index,
        text: delta,
        logprobs: choiceLogprobs(prepared, choice, i, i + 1, offsets[choice.index]!),
        finish_reason: last ? choice.generation.finishReason : null,
        stop_reason: last ? choice.generation.stopReason : null,
        // vLLM sends the prompt ids once per choice, with its first token.
        prompt_token_ids: request.return_token_ids && i === 0 ? promptIds : null,
        token_ids: request.return_token_ids ? [ids[i]] : null,
      };
      offsets[choice.index]! += (choice.generation.textDeltas[i] ?? "").length;
      if (i === 0 && scope.malformed) {
        context.stats.fault("malformed");
        sse.sendRaw(JSON.stringify({ ...head, choices: [chunkChoice], usage: null }).slice(0, 40));
        return aborted(sse, 0);
      }
      if (!sse.send({ ...head, choices: [chunkChoice], usage: null })) return i;
    }
  }
  const total = prepared.choices.reduce(
    (sum, choice) => sum + choice.generation.tokenIds.length,
    0,
  );
  // The final usage chunk is serialised with exclude_none, so prompt_tokens_details is left out.
  const { prompt_tokens_details: _details, ...finalUsage } = usage(promptIds.length, total);
  if (request.stream_options?.include_usage) sse.send({ ...head, choices: [], usage: finalUsage });
  sse.done();
  return null;
}

function aborted(sse: SseWriter, positions: number): number {
  sse.abort();
  return positions;
}

/** Answers one completions request. */
export async function handleCompletions(
  body: unknown,
  scope: RequestScope,
  context: SimulatorContext,
): Promise<void> {
  const prepared = prepare(body, scope, context);
  const aborted = await serveGeneration(
    context,
    scope,
    {
      promptIds: prepared.promptIds,
      cacheSalt: prepared.request.cache_salt,
      streamed: Boolean(prepared.request.stream),
      choices: prepared.choices,
    },
    {
      stream: (served) => stream(prepared, served, context),
      body: (served) => completionBody(prepared, served, context),
    },
  );
  if (aborted === null) return;
  for (const choice of prepared.choices)
    context.interrupted.record(prepared.base, choice.scriptSeed, [
      ...prepared.prefix,
      ...choice.generation.tokenIds.slice(0, aborted),
    ]);
}
