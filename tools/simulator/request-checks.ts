/**
 * @module Checks vLLM applies to every generation request before rendering a prompt. Request-model
 * validators (vllm/entrypoints/openai/chat_completion/protocol.py) answer "Bad Request"; checks
 * made while serving answer "BadRequestError" (see errors.ts).
 */
import { randomUUID } from "node:crypto";
import {
  modelNotFound,
  modelValidatorError,
  requestValidationError,
  validationError,
} from "./errors";
import { type SimTokenizer, isTokenId } from "./sim-tokenizer";

/** vLLM's `VLLM_MAX_STOP_STRINGS` default (PR #51447): more stop strings fail request validation. */
export const MAX_STOP_STRINGS = 4;

/** vLLM's 404 unless `model` is absent or the served name. */
export function checkModel(model: string | null | undefined, served: string): void {
  if (model !== null && model !== undefined && model !== served) throw modelNotFound(model);
}

/** vLLM's SamplingParams rejects max_tokens below 1. */
export function checkMaxTokens(maxTokens: number | null, param: string): void {
  if (maxTokens !== null && maxTokens < 1)
    throw validationError(`max_tokens must be at least 1, got ${maxTokens}.`, param, maxTokens);
}

/** ChatCompletionRequest.validate_stream_options: stream_options need `stream=True`. */
export function checkStreamOptions(
  stream: boolean | null | undefined,
  streamOptions: unknown,
): void {
  if (streamOptions !== null && streamOptions !== undefined && !stream) {
    throw modelValidatorError(
      "Stream options can only be defined when `stream=True`.",
      "stream_options",
    );
  }
}

/** `stop` is a list of at most `MAX_STOP_STRINGS` (pydantic's max_length wording). */
export function checkStopCount(stop: string | readonly string[] | null | undefined): void {
  if (Array.isArray(stop) && stop.length > MAX_STOP_STRINGS) {
    const msg = `List should have at most ${MAX_STOP_STRINGS} items after validation, not ${stop.length}`;
    throw requestValidationError(
      [{ type: "too_long", loc: ["body", "stop", "list[str]"], msg }],
      "stop",
    );
  }
}

/** Prompt token ids must be in the vocabulary. */
export function checkTokenIds(
  tokenizer: SimTokenizer,
  ids: readonly number[],
  param: string,
): void {
  const bad = ids.find((id) => !isTokenId(tokenizer, id));
  if (bad !== undefined) throw validationError(`Token id ${bad} is out of vocabulary`, param, bad);
}

/** `stop` as a list. */
export function stopList(stop: string | readonly string[] | null | undefined): string[] {
  if (stop === null || stop === undefined) return [];
  return typeof stop === "string" ? [stop] : [...stop];
}

/**
 * The response id: `<prefix>-` plus the X-Request-Id header, else the body's `request_id`, else
 * 32 hex digits (vLLM's random_uuid), as OpenAIServing._base_request_id picks it.
 */
export function responseId(
  prefix: string,
  header: string | null = null,
  bodyRequestId?: string | null,
): string {
  return `${prefix}-${header ?? bodyRequestId ?? randomUUID().replaceAll("-", "")}`;
}
