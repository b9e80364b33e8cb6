/**
 * @module `POST /v1/completions`: one prompt (text or token ids). A prompt in ChatML is read
 * back into turns, so a client that renders chats itself gets the same scripted behaviour.
 * No tool parser runs here: tool calls stay in `text` as hermes blocks.
 */
import { readChatMlPrompt } from "./chatml-reader";
import type { RequestScope, SimulatorContext } from "./context";
import { checkContextLength, validationError } from "./errors";
import { replyAfterLatency } from "./faults";
import { type Generation, generate, generationSeed } from "./generation";
import { pause, parseBody, startSse } from "./http-io";
import { completionLogprobs } from "./logprobs";
import { admitPdRequest } from "./pd-handshake";
import { runPolicy } from "./policy";
import { CompletionRequest } from "./request-schemas";
import { checkMaxTokens, checkModel, checkSingleChoice, checkStreamOptions, checkTokenIds, responseId, stopList } from "./request-checks";
import { createRng } from "./rng";
import { decode, encode } from "./tokenizer";

/** vLLM's CompletionRequest default for max_tokens. */
const DEFAULT_MAX_TOKENS = 16;

interface PreparedCompletion {
  request: CompletionRequest;
  promptIds: number[];
  generation: Generation;
  seed: number;
  /** A prefill-role answer's handle for the decode server, else null. */
  kvTransferParams: Record<string, unknown> | null;
}

function prepare(body: unknown, scope: RequestScope, context: SimulatorContext): PreparedCompletion {
  const { config } = scope;
  const request = parseBody(CompletionRequest, "CompletionRequest", body);
  checkModel(request.model, config.model);
  checkSingleChoice(request.n);
  checkStreamOptions(request.stream, request.stream_options);
  if (request.echo) throw validationError("The vLLM simulator does not support echo.", "echo");
  if (request.prompt === "" || (Array.isArray(request.prompt) && request.prompt.length === 0)) {
    throw validationError("Either prompt or prompt_embeds must be provided and non-empty.", "prompt");
  }
  const maxTokens = request.max_tokens ?? DEFAULT_MAX_TOKENS;
  checkMaxTokens(maxTokens, "max_tokens");
  const promptIds = typeof request.prompt === "string" ? encode(request.prompt) : request.prompt;
  checkTokenIds(promptIds, "prompt");
  checkContextLength(config.maxModelLen, promptIds.length, maxTokens);
  const kvTransferParams = admitPdRequest(config.role, request, promptIds, context.engine(), context.stats);

  const seed = generationSeed(config.seed, request, context.nextRequestNumber(), promptIds);
  const read = readChatMlPrompt(decode(promptIds));
  const output = runPolicy({
    turns: read.turns,
    toolNames: read.toolNames,
    toolMode: read.toolNames.length > 0 ? "auto" : "none",
    rng: createRng(seed),
    successRate: config.successRate,
    thinking: config.thinking,
  });
  const generation = generate(output, { maxTokens, stop: stopList(request.stop) });
  return { request, promptIds, generation, seed, kvTransferParams };
}

function usage(promptTokens: number, completionTokens: number): Record<string, unknown> {
  return { prompt_tokens: promptTokens, total_tokens: promptTokens + completionTokens, completion_tokens: completionTokens, prompt_tokens_details: null };
}

function completionBody(prepared: PreparedCompletion, model: string): Record<string, unknown> {
  const { request, generation, promptIds } = prepared;
  const ids = generation.tokenIds;
  return {
    id: responseId("cmpl"),
    object: "text_completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        text: generation.text,
        logprobs: request.logprobs != null ? completionLogprobs(prepared.seed, ids, generation.textDeltas, request.logprobs) : null,
        finish_reason: generation.finishReason,
        stop_reason: generation.stopReason,
        token_ids: request.return_token_ids ? ids : null,
        prompt_logprobs: null,
        prompt_token_ids: request.return_token_ids ? promptIds : null,
      },
    ],
    service_tier: null,
    system_fingerprint: null,
    usage: usage(promptIds.length, ids.length),
    kv_transfer_params: prepared.kvTransferParams,
  };
}

async function stream(prepared: PreparedCompletion, scope: RequestScope, context: SimulatorContext): Promise<void> {
  const { request, generation, promptIds } = prepared;
  const { latency, model } = scope.config;
  const head = { id: responseId("cmpl"), object: "text_completion", created: Math.floor(Date.now() / 1000), model };
  const sse = startSse(scope.res);
  const ids = generation.tokenIds;
  let offset = 0;
  for (let i = 0; i < ids.length; i++) {
    const wait = i === 0 ? latency.ttftMs : latency.perTokenMs;
    if (!(await pause(wait, scope.signal))) return sse.abort();
    const delta = generation.textDeltas[i] ?? "";
    const last = i === ids.length - 1;
    const choice = {
      index: 0,
      text: delta,
      logprobs: request.logprobs != null ? completionLogprobs(prepared.seed, [ids[i] as number], [delta], request.logprobs, i, offset) : null,
      finish_reason: last ? generation.finishReason : null,
      stop_reason: last ? generation.stopReason : null,
      // vLLM sends the prompt ids once, with the first token.
      prompt_token_ids: request.return_token_ids && i === 0 ? promptIds : null,
      token_ids: request.return_token_ids ? [ids[i]] : null,
    };
    offset += delta.length;
    if (i === 0 && scope.malformed) {
      context.stats.fault("malformed");
      sse.sendRaw(JSON.stringify({ ...head, choices: [choice], usage: null }).slice(0, 40));
      return sse.abort();
    }
    if (!sse.send({ ...head, choices: [choice], usage: null })) return;
  }
  if (request.stream_options?.include_usage) sse.send({ ...head, choices: [], usage: usage(promptIds.length, ids.length) });
  sse.done();
}

/** Answers one completions request. */
export async function handleCompletions(body: unknown, scope: RequestScope, context: SimulatorContext): Promise<void> {
  const prepared = prepare(body, scope, context);
  context.stats.completion(prepared.promptIds.length, prepared.generation.tokenIds.length);
  if (prepared.request.stream) {
    await stream(prepared, scope, context);
    return;
  }
  await replyAfterLatency(scope, context, prepared.generation.tokenIds.length, () => completionBody(prepared, scope.config.model));
}
