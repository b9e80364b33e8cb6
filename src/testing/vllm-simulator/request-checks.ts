/** @module Checks vLLM applies to every generation request before rendering a prompt. */
import { randomUUID } from "node:crypto";
import { modelNotFound, validationError } from "./errors";
import { isTokenId } from "./tokenizer";

/** vLLM's 404 unless `model` is absent or the served name. */
export function checkModel(model: string | null | undefined, served: string): void {
  if (model !== null && model !== undefined && model !== served) throw modelNotFound(model);
}

/** The simulator answers one choice per request. */
export function checkSingleChoice(n: number | null | undefined): void {
  if (n !== null && n !== undefined && n !== 1) {
    throw validationError("The vLLM simulator supports only n=1; send one request per sample.", "n", n);
  }
}

/** vLLM's SamplingParams rejects max_tokens below 1. */
export function checkMaxTokens(maxTokens: number | null, param: string): void {
  if (maxTokens !== null && maxTokens < 1) throw validationError(`max_tokens must be at least 1, got ${maxTokens}.`, param, maxTokens);
}

/** vLLM rejects stream_options on a non-streaming request. */
export function checkStreamOptions(stream: boolean | null | undefined, streamOptions: unknown): void {
  if (streamOptions !== null && streamOptions !== undefined && !stream) {
    throw validationError("Stream options can only be defined when `stream=True`.", "stream_options");
  }
}

/** Prompt token ids must be in the vocabulary. */
export function checkTokenIds(ids: readonly number[], param: string): void {
  const bad = ids.find((id) => !isTokenId(id));
  if (bad !== undefined) throw validationError(`Token id ${bad} is out of vocabulary`, param, bad);
}

/** `stop` as a list. */
export function stopList(stop: string | readonly string[] | null | undefined): string[] {
  if (stop === null || stop === undefined) return [];
  return typeof stop === "string" ? [stop] : [...stop];
}

/** `chatcmpl-`/`cmpl-` plus 32 hex digits, like vLLM's random_uuid ids. */
export function responseId(prefix: string): string {
  return `${prefix}-${randomUUID().replaceAll("-", "")}`;
}
