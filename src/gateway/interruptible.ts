/**
 * @module Which calls a weight sync may interrupt and resume from token ids. Resuming is exact
 * only for plain generation: the continuation is a completions request whose prompt is the
 * prompt ids plus the ids generated so far, under the same temperature and top_p. Tools and
 * `tool_choice` (the parser and guided decoding see the whole output), `response_format` and
 * guided decoding (the grammar state is lost at the cut), presence/frequency/repetition penalties
 * (they count the output, which the continuation sees as prompt) and a `seed` (the sampler's
 * random stream restarts) are not: such calls are drained, as a drain sync does. Calls with
 * `stop` strings are interruptible: vLLM matches stop strings in one request's own output, so the
 * gateway checks them across the cut itself (stop-window.ts, stop-relay.ts); `stop_token_ids` are
 * single tokens and never span a cut.
 */
import type { JsonObject } from "../schemas/json";
import type { UpstreamPath } from "./model-backend";

/** Why a call cannot be interrupted, or null when it can. */
export function notInterruptibleBecause(path: UpstreamPath, body: JsonObject): string | null {
  if (path !== "/chat/completions") return "text completions are drained";
  const tools = body.tools;
  if (Array.isArray(tools) && tools.length > 0) return "tools";
  if (body.tool_choice !== undefined && body.tool_choice !== null && body.tool_choice !== "none")
    return "tool_choice";
  if (body.response_format !== undefined && body.response_format !== null) return "response_format";
  for (const key of [
    "guided_json",
    "guided_regex",
    "guided_choice",
    "guided_grammar",
    "structured_outputs",
  ])
    if (body[key] !== undefined && body[key] !== null) return key;
  for (const key of ["presence_penalty", "frequency_penalty"])
    if (typeof body[key] === "number" && body[key] !== 0) return key;
  if (typeof body.repetition_penalty === "number" && body.repetition_penalty !== 1)
    return "repetition_penalty";
  if (body.seed !== undefined && body.seed !== null) return "seed";
  if (typeof body.n === "number" && body.n > 1) return "n";
  return null;
}

/** The sampling parameters a continuation repeats (everything that shapes a plain token's draw). */
const SAMPLING_KEYS = [
  "temperature",
  "top_p",
  "top_k",
  "min_p",
  "stop",
  "stop_token_ids",
  "ignore_eos",
  "skip_special_tokens",
  "include_stop_str_in_output",
  "min_tokens",
] as const;

/**
 * The completions request that continues `shaped` (a chat request as sent upstream) after
 * `generated` of its tokens: prompt ids + generated ids, `max_tokens` reduced by what was generated.
 */
export function continuationBody(
  shaped: JsonObject,
  promptIds: readonly number[],
  generated: readonly number[],
): JsonObject {
  const body: JsonObject = {
    model: shaped.model ?? null,
    prompt: [...promptIds, ...generated],
    max_tokens: (shaped.max_tokens as number) - generated.length,
    stream: true,
    return_token_ids: true,
  };
  for (const key of SAMPLING_KEYS) if (shaped[key] !== undefined) body[key] = shaped[key];
  // min_tokens counts the whole output (EOS and stop strings wait for it): what is left of it.
  if (typeof shaped.min_tokens === "number")
    body.min_tokens = Math.max(0, shaped.min_tokens - generated.length);
  if (shaped.logprobs === true)
    body.logprobs = typeof shaped.top_logprobs === "number" ? shaped.top_logprobs : 0;
  if (shaped.stream_options !== undefined) body.stream_options = shaped.stream_options;
  return body;
}

/** A run of tokens generated under one policy version, from token `from_token` on. */
export interface VersionRun {
  from_token: number;
  policy_version: number;
}

/** Appends a run for tokens from `fromToken` on, merging it into the last when the version did not change. */
export function addRun(runs: VersionRun[], fromToken: number, version: number): VersionRun[] {
  const last = runs[runs.length - 1];
  if (last && last.policy_version === version) return runs;
  if (last && last.from_token === fromToken)
    return [...runs.slice(0, -1), { from_token: fromToken, policy_version: version }];
  return [...runs, { from_token: fromToken, policy_version: version }];
}
