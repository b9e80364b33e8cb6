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
import { type StreamAnswer, endStreamEarly, sequenceSpecs, serveGeneration } from "./served-scope";
import { samplingParamsOf } from "./sampling-params";
import { logprobSeed, splitContinuation } from "./continuation";
import type { EngineRequest, EngineRequestSpec } from "./engine/engine-loop";
import type { Generation } from "./engine/sequence";
import { generationSeed } from "./outcome-seed";
import { parseBody, startSse } from "./http-io";
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
} from "./request-checks";
import { scriptedOutput } from "./script";
import { decodeIds } from "./sim-tokenizer";
import { tokenizerFor } from "./tokenizer-registry";

/** vLLM's CompletionRequest default for max_tokens. */
const DEFAULT_MAX_TOKENS = 16;

interface CompletionChoice {
  index: number;
  /** What the engine generated (set when the request ends). */
  generation: Generation | null;
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
  /** One engine sequence per choice. */
  specs: Array<Omit<EngineRequestSpec, "onToken">>;
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
  const seed =
    resumed ?? generationSeed(config.seed, request, requestNumber, base, scope.sampleKey);
  const params = samplingParamsOf(request, maxTokens, request.logprobs ?? 0);
  const read = readChatMlPrompt(decodeIds(tokenizer, base));
  const openTurn = decodeIds(tokenizer, prefix);
  const choices = Array.from({ length: request.n ?? 1 }, (_, index) => {
    const choice = choiceSeed(seed, index, request.temperature);
    const output = isEmptyReply(config.emptyReplyRate, choice)
      ? undefined
      : scriptedOutput(
          {
            turns: read.turns,
            toolNames: read.toolNames,
            toolMode: read.toolNames.length > 0 ? "auto" : "none",
            thinking: config.thinking,
            tools: read.tools,
            sampleKey: scope.sampleKey,
            openTurn,
          },
          config,
          choice,
        );
    const body = output ? tokenizer.renderAssistantBody(output.content, output.toolCalls) : [];
    // A continued turn picks the script up where its ids stop (a script already over ends with
    // EOS at once); stop strings apply to the new text only, as vLLM checks the output, not the prompt.
    return {
      index,
      seed: logprobSeed(choice, config.policyVersion),
      scriptSeed: choice,
      bodyIds: body.slice(prefix.length),
      ...(prefix.length > 0 ? { turnBodyIds: body } : {}),
      generation: null,
    };
  });
  // Positions count from the start of the assistant turn, so a continued turn's logprobs carry on.
  const specs = sequenceSpecs(
    scope,
    { promptIds, salt: request.cache_salt, params, tokenizer, positionOffset: prefix.length },
    choices,
  );
  return {
    request,
    id: responseId("cmpl", scope.requestIdHeader, request.request_id),
    promptIds,
    base,
    prefix,
    choices: choices.map(
      ({ bodyIds: _body, turnBodyIds: _turn, ...choice }): CompletionChoice => choice,
    ),
    specs,
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

/** Logprobs of tokens `start..end` of a choice, behind the prompt's when echoing from the start. */
function choiceLogprobs(
  prepared: PreparedCompletion,
  choice: CompletionChoice,
  generation: Pick<Generation, "logprobs" | "textDeltas">,
  start: number,
  end: number,
  offset: number,
): CompletionLogprobs | null {
  const { request, promptIds } = prepared;
  if (request.logprobs === null || request.logprobs === undefined) return null;
  const tokenizer = tokenizerFor(prepared.config.tokenizer);
  const own = completionLogprobs(
    tokenizer,
    generation.logprobs.slice(start, end),
    generation.textDeltas.slice(start, end),
    request.logprobs,
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
  const generations = prepared.choices.map((choice) => choice.generation!);
  const first = generations[0]!;
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
    choices: prepared.choices.map((choice, i) => {
      const generation = generations[i]!;
      return {
        index: choice.index,
        text: echoed + generation.text,
        logprobs: choiceLogprobs(prepared, choice, generation, 0, generation.tokenIds.length, 0),
        finish_reason: generation.finishReason,
        stop_reason: generation.stopReason,
        token_ids: request.return_token_ids ? generation.tokenIds : null,
        prompt_logprobs: null,
        prompt_token_ids: request.return_token_ids ? promptIds : null,
      };
    }),
    service_tier: null,
    system_fingerprint: null,
    usage: usage(
      promptIds.length,
      generations.reduce((sum, generation) => sum + generation.tokenIds.length, 0),
    ),
    kv_transfer_params: handle,
  };
}

/** The streamed answer: a chunk per token as the engine produces it, then usage and `[DONE]`. */
function streamAnswer(
  prepared: PreparedCompletion,
  scope: RequestScope,
  context: SimulatorContext,
  served: readonly EngineRequest[],
): StreamAnswer {
  const { request, promptIds } = prepared;
  const head = {
    id: prepared.id,
    object: "text_completion",
    created: Math.floor(Date.now() / 1000),
    model: scope.config.model,
  };
  const sse = startSse(scope.res);
  const echoed = echoText(prepared);
  const offsets = prepared.choices.map(() => 0);
  return {
    token(index, event) {
      const choice = prepared.choices[index]!;
      const i = event.position;
      const chunkChoice = {
        index: choice.index,
        text: (i === 0 ? echoed : "") + event.streamDelta,
        logprobs: choiceLogprobs(
          prepared,
          choice,
          { logprobs: [event.choices], textDeltas: [event.textDelta] },
          0,
          1,
          offsets[index]!,
        ),
        finish_reason: event.finished?.reason ?? null,
        stop_reason: event.finished?.stopReason ?? null,
        // vLLM sends the prompt ids once per choice, with its first token.
        prompt_token_ids: request.return_token_ids && i === 0 ? promptIds : null,
        token_ids: request.return_token_ids ? [event.id] : null,
      };
      offsets[index]! += event.textDelta.length;
      if (i === 0 && scope.malformed) {
        context.stats.fault("malformed");
        sse.sendRaw(JSON.stringify({ ...head, choices: [chunkChoice], usage: null }).slice(0, 40));
        return false;
      }
      return sse.send({ ...head, choices: [chunkChoice], usage: null });
    },
    end() {
      const total = served.reduce((sum, r) => sum + r.output.ids.length, 0);
      // The final usage chunk is serialised with exclude_none, so prompt_tokens_details is left out.
      const { prompt_tokens_details: _details, ...finalUsage } = usage(promptIds.length, total);
      if (request.stream_options?.include_usage)
        sse.send({ ...head, choices: [], usage: finalUsage });
      sse.done();
    },
    abort: (error) => endStreamEarly(sse, error),
  };
}

/** Answers one completions request. */
export async function handleCompletions(
  body: unknown,
  scope: RequestScope,
  context: SimulatorContext,
): Promise<void> {
  const prepared = prepare(body, scope, context);
  const { requests, clientGone } = await serveGeneration(
    context,
    scope,
    {
      promptIds: prepared.promptIds,
      streamed: Boolean(prepared.request.stream),
      choices: prepared.specs,
    },
    {
      stream: (requests) => streamAnswer(prepared, scope, context, requests),
      body: (requests) => {
        prepared.choices.forEach(
          (choice, i) => (choice.generation = requests[i]!.output.generation()),
        );
        return completionBody(prepared, scope, context);
      },
    },
  );
  if (!clientGone) return;
  // Remembered for a resume from token ids (continuation.ts): the turn so far, then what this call added.
  prepared.choices.forEach((choice, i) =>
    context.interrupted.record(prepared.base, choice.scriptSeed, [
      ...prepared.prefix,
      ...(requests[i]?.output.ids ?? []),
    ]),
  );
}
