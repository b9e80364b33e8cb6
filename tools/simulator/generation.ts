/**
 * @module Turns the scripted answer into generated tokens: render it with the template's
 * assistant-body rule, append EOS, then apply stop strings and max_tokens as vLLM would.
 */
import type { ScriptAnswer } from "./scripted-answers";
import { hashParts } from "./rng";
import { type SimTokenizer, createUtf8Decoder, decodeIds } from "./sim-tokenizer";

/** Limits on one generation. */
export interface GenerateLimits {
  /** Most tokens to generate (already resolved from max_tokens or the free context). */
  maxTokens: number;
  /** Stop strings; the text is cut before the first one found. */
  stop: readonly string[];
  /** vLLM's `include_stop_str_in_output`: the text is cut after the stop string instead. Default false. */
  includeStopStr?: boolean;
  /**
   * vLLM's `ignore_eos`: EOS does not end the generation, which runs to `maxTokens` (finish
   * "length"). The simulator continues with the body's own tokens again, so a long completion
   * (the drain bench's) still decodes to text. Default false.
   */
  ignoreEos?: boolean;
}

/** One generated completion. */
export interface Generation {
  /** Generated ids: ends with EOS when finished by "stop" without a stop string. */
  tokenIds: number[];
  finishReason: "stop" | "length";
  /** The stop string that ended generation, else null (also null for EOS, as in vLLM). */
  stopReason: string | null;
  /** Generated text without control tokens, cut before a matched stop string. */
  text: string;
  /** Text each token adds to `text`, in order (empty for control tokens and cut-off tails). */
  textDeltas: string[];
  /**
   * Text each token's streamed chunk carries: `textDeltas`, except that with stop strings (and
   * without `includeStopStr`) the last `longest stop - 1` characters wait until the output is
   * known not to end in a stop string, as vLLM's stop buffer holds them (detokenizer.py,
   * `get_next_output_text`); the last token's chunk carries all that is left.
   */
  streamDeltas: string[];
}

/**
 * Seed of one sampled outcome. temperature 0 is greedy, so it depends only on the prompt; a
 * request seed makes it reproducible; otherwise a per-server request number varies it.
 */
export function generationSeed(
  serverSeed: number,
  request: { seed?: number | null; temperature?: number | null },
  requestNumber: number,
  promptIds: readonly number[],
): number {
  if (request.temperature === 0) return hashParts(serverSeed, "greedy", promptIds);
  if (request.seed !== null && request.seed !== undefined)
    return hashParts(serverSeed, "seed", request.seed, promptIds);
  return hashParts(serverSeed, "request", requestNumber, promptIds);
}

function textDeltasOf(tokenizer: SimTokenizer, ids: readonly number[]): string[] {
  // A streaming decoder holds back a partial UTF-8 character until its last byte arrives, as
  // vLLM's incremental detokenizer does.
  const decoder = createUtf8Decoder();
  return ids.map((id) =>
    tokenizer.controlTokenIds.has(id)
      ? ""
      : decoder.decode(tokenizer.tokenBytes(id), { stream: true }),
  );
}

/**
 * vLLM's check_stop_strings: in the order given, the first stop string that the text added since
 * `before` completes (the search starts `len(stop) - 1` characters before the new text).
 */
function findStop(
  text: string,
  before: number,
  stop: readonly string[],
): { index: number; stop: string } | undefined {
  for (const s of stop) {
    if (s === "") continue;
    const index = text.indexOf(s, Math.max(0, before - s.length + 1));
    if (index >= 0) return { index, stop: s };
  }
  return undefined;
}

/** Generates the tokens of `output` (rendered in hermes format) under `limits`. */
export function generate(
  tokenizer: SimTokenizer,
  output: ScriptAnswer,
  limits: GenerateLimits,
): Generation {
  return generateIds(
    tokenizer,
    tokenizer.renderAssistantBody(output.content, output.toolCalls),
    limits,
  );
}

/** Generates `bodyIds` then EOS under `limits` (for output not in hermes format, e.g. constrained JSON). */
export function generateIds(
  tokenizer: SimTokenizer,
  bodyIds: readonly number[],
  limits: GenerateLimits,
): Generation {
  let ids = limits.ignoreEos
    ? continuedPastEos(tokenizer, bodyIds, limits.maxTokens)
    : [...bodyIds, tokenizer.eosTokenId];
  let finishReason: Generation["finishReason"] = "stop";
  let stopReason: string | null = null;
  let cut: number | undefined;

  if (limits.stop.length > 0) {
    const deltas = textDeltasOf(tokenizer, ids);
    let text = "";
    for (let i = 0; i < ids.length; i++) {
      const before = text.length;
      text += deltas[i];
      if (text.length === before) continue;
      const hit = findStop(text, before, limits.stop);
      if (hit) {
        // vLLM keeps the token that completed the stop string but cuts the text before it (after it
        // with include_stop_str_in_output).
        ids = ids.slice(0, i + 1);
        stopReason = hit.stop;
        cut = limits.includeStopStr ? hit.index + hit.stop.length : hit.index;
        break;
      }
    }
  }
  if (ids.length > limits.maxTokens || (limits.ignoreEos && stopReason === null)) {
    ids = ids.slice(0, limits.maxTokens);
    finishReason = "length";
    stopReason = null;
    cut = undefined;
  }

  const full = decodeIds(tokenizer, ids, { skipSpecialTokens: true });
  const text = cut === undefined ? full : full.slice(0, cut);
  const textDeltas = textDeltasOf(tokenizer, ids);
  const uncut = [...textDeltas];
  if (cut !== undefined) clipDeltas(textDeltas, text.length);
  const hold =
    limits.stop.length > 0 && !limits.includeStopStr
      ? Math.max(...limits.stop.map((s) => s.length)) - 1
      : 0;
  return {
    tokenIds: ids,
    finishReason,
    stopReason,
    text,
    textDeltas,
    streamDeltas: hold > 0 ? heldBack(uncut, text, hold) : [...textDeltas],
  };
}

/**
 * What each token's chunk may send when the last `hold` characters of the text so far (before any
 * stop-string cut, which only the last token makes) wait for the next token; the last sends the rest of `text`.
 */
function heldBack(deltas: readonly string[], text: string, hold: number): string[] {
  let total = 0;
  let sent = 0;
  return deltas.map((delta, i) => {
    total += delta.length;
    const upTo =
      i === deltas.length - 1 ? text.length : Math.min(text.length, Math.max(sent, total - hold));
    const out = text.slice(sent, upTo);
    sent = upTo;
    return out;
  });
}

/** `bodyIds` repeated up to `maxTokens` (a space token when the body is empty): never EOS. */
function continuedPastEos(
  tokenizer: SimTokenizer,
  bodyIds: readonly number[],
  maxTokens: number,
): number[] {
  const body = bodyIds.length > 0 ? bodyIds : tokenizer.encode(" ");
  return Array.from({ length: maxTokens }, (_, i) => body[i % body.length]!);
}

function clipDeltas(deltas: string[], length: number): void {
  let remaining = length;
  for (let i = 0; i < deltas.length; i++) {
    const delta = deltas[i] as string;
    deltas[i] = delta.slice(0, Math.max(0, remaining));
    remaining -= delta.length;
  }
}
