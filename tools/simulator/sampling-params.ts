/**
 * @module A request's sampling parameters as the engine and the token source act on them, the same
 * for chat and completions (vLLM builds one SamplingParams from either), with vLLM's checks on the
 * ones that relate to each other (SamplingParams._verify_args).
 */
import type { SamplingParams } from "./engine/sequence";
import { validationError } from "./errors";
import { stopList } from "./request-checks";

/** The request fields both endpoints share. */
export interface SamplingFields {
  temperature?: number | null | undefined;
  top_p?: number | null | undefined;
  top_k?: number | null | undefined;
  seed?: number | null | undefined;
  stop?: string | string[] | null | undefined;
  stop_token_ids?: number[] | null | undefined;
  min_tokens?: number | null | undefined;
  ignore_eos?: boolean | null | undefined;
  include_stop_str_in_output?: boolean | null | undefined;
}

/**
 * The sampling parameters of `request`, generating at most `maxTokens` and reporting
 * `topLogprobs` alternatives. `min_tokens` above `maxTokens` is vLLM's 400.
 */
export function samplingParamsOf(
  request: SamplingFields,
  maxTokens: number,
  topLogprobs: number,
): SamplingParams {
  const minTokens = request.min_tokens ?? 0;
  if (minTokens > maxTokens)
    throw validationError(
      `min_tokens must be less than or equal to max_tokens=${maxTokens}, got ${minTokens}.`,
      "min_tokens",
      minTokens,
    );
  return {
    maxTokens,
    minTokens,
    ignoreEos: request.ignore_eos === true,
    stop: stopList(request.stop),
    stopTokenIds: request.stop_token_ids ?? [],
    includeStopStr: request.include_stop_str_in_output === true,
    topLogprobs,
    temperature: request.temperature ?? 1,
    topP: request.top_p ?? 1,
    topK: request.top_k ?? -1,
    seed: request.seed ?? null,
  };
}
