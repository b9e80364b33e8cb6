/**
 * @module Deterministic fake logprobs in vLLM's two wire shapes (chat `content[]` entries and
 * the legacy completions arrays). The sampled token is always the most likely one listed.
 */
import { createRng, hashParts } from "./rng";
import { type SimTokenizer, tokenText, utf8Bytes } from "./sim-tokenizer";

/** One alternative token and its logprob. */
export interface TokenChoice {
  id: number;
  logprob: number;
}

/**
 * The sampled token's logprob, in [-3, 0) and strictly negative, followed by `count - 1`
 * less likely alternatives; a pure function of (seed, position, token).
 */
export function tokenChoices(
  tokenizer: SimTokenizer,
  seed: number,
  position: number,
  id: number,
  count: number,
): TokenChoice[] {
  const [first, last] = tokenizer.plainTokenRange;
  const rng = createRng(hashParts(seed, "logprob", position, id));
  const logprob = -3 * (1 - rng.next());
  const choices: TokenChoice[] = [{ id, logprob }];
  const used = new Set([id]);
  let current = logprob;
  while (choices.length < count) {
    const alt = rng.int(first, last);
    if (used.has(alt)) continue;
    used.add(alt);
    current -= 0.01 + rng.next() * 1.5;
    choices.push({ id: alt, logprob: current });
  }
  return choices;
}

/** A chat logprob entry: `{token, logprob, bytes}` (bytes of the token's display string, as vLLM encodes it). */
export interface ChatLogprob {
  token: string;
  logprob: number;
  bytes: number[];
}

/** One entry of `choices[].logprobs.content`. */
export interface ChatLogprobEntry extends ChatLogprob {
  top_logprobs: ChatLogprob[];
}

/** One token as vLLM's chat logprobs show it: `decode([id])` and the UTF-8 bytes of that string. */
function chatLogprob(tokenizer: SimTokenizer, choice: TokenChoice): ChatLogprob {
  const token = tokenText(tokenizer, choice.id);
  return { token, logprob: choice.logprob, bytes: utf8Bytes(token) };
}

/** `logprobs.content` entries for ids starting at `start` in the completion. */
export function chatLogprobEntries(
  tokenizer: SimTokenizer,
  seed: number,
  ids: readonly number[],
  topLogprobs: number,
  start = 0,
): ChatLogprobEntry[] {
  return ids.map((id, i) => {
    const choices = tokenChoices(tokenizer, seed, start + i, id, Math.max(1, topLogprobs));
    const [sampled] = choices as [TokenChoice];
    return {
      ...chatLogprob(tokenizer, sampled),
      top_logprobs: topLogprobs > 0 ? choices.map((choice) => chatLogprob(tokenizer, choice)) : [],
    };
  });
}

/** The legacy completions logprobs object. */
export interface CompletionLogprobs {
  text_offset: number[];
  /** Null for a token without a logprob (the first prompt token when `echo` adds the prompt's). */
  token_logprobs: Array<number | null>;
  tokens: string[];
  top_logprobs: Array<Record<string, number> | null>;
}

/** Completions logprobs for ids starting at `start`, with text offsets counted from `offset`. */
export function completionLogprobs(
  tokenizer: SimTokenizer,
  seed: number,
  ids: readonly number[],
  deltas: readonly string[],
  topLogprobs: number,
  start = 0,
  offset = 0,
): CompletionLogprobs {
  const out: CompletionLogprobs = {
    text_offset: [],
    token_logprobs: [],
    tokens: [],
    top_logprobs: [],
  };
  let position = offset;
  ids.forEach((id, i) => {
    const choices = tokenChoices(tokenizer, seed, start + i, id, Math.max(1, topLogprobs));
    out.text_offset.push(position);
    out.token_logprobs.push((choices[0] as TokenChoice).logprob);
    out.tokens.push(tokenText(tokenizer, id));
    out.top_logprobs.push(
      Object.fromEntries(choices.map((c) => [tokenText(tokenizer, c.id), c.logprob])),
    );
    position += (deltas[i] ?? "").length;
  });
  return out;
}

/**
 * Completions logprobs of an echoed prompt (vLLM's prompt_logprobs, which start with None: the
 * first token has no context), offsets counted from 0 by token strings.
 */
export function promptLogprobs(
  tokenizer: SimTokenizer,
  seed: number,
  promptIds: readonly number[],
  topLogprobs: number,
): CompletionLogprobs {
  const strings = promptIds.map((id) => tokenText(tokenizer, id));
  const out = completionLogprobs(
    tokenizer,
    hashParts(seed, "prompt"),
    promptIds,
    strings,
    topLogprobs,
  );
  if (out.token_logprobs.length > 0) {
    out.token_logprobs[0] = null;
    out.top_logprobs[0] = null;
  }
  return out;
}

/** `a` then `b`, with `b`'s text offsets moved past `a`'s text. */
export function concatLogprobs(
  a: CompletionLogprobs,
  aTextLength: number,
  b: CompletionLogprobs,
): CompletionLogprobs {
  return {
    text_offset: [...a.text_offset, ...b.text_offset.map((offset) => offset + aTextLength)],
    token_logprobs: [...a.token_logprobs, ...b.token_logprobs],
    tokens: [...a.tokens, ...b.tokens],
    top_logprobs: [...a.top_logprobs, ...b.top_logprobs],
  };
}
