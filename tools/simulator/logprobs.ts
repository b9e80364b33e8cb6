/**
 * @module Logprobs in vLLM's two wire shapes (chat `content[]` entries and the legacy completions
 * arrays), from what the token source recorded per token; and the scripted source's deterministic
 * fake ones, where the sampled token is always the most likely one listed.
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

/**
 * `logprobs.content` entries of recorded tokens: each token's choices (the sampled token first,
 * then alternatives), `topLogprobs` of them listed under `top_logprobs`.
 */
export function chatLogprobEntries(
  tokenizer: SimTokenizer,
  recorded: ReadonlyArray<readonly TokenChoice[]>,
  topLogprobs: number,
): ChatLogprobEntry[] {
  return recorded.map((choices) => ({
    ...chatLogprob(tokenizer, choices[0]!),
    top_logprobs:
      topLogprobs > 0
        ? choices.slice(0, topLogprobs).map((choice) => chatLogprob(tokenizer, choice))
        : [],
  }));
}

/** The legacy completions logprobs object. */
export interface CompletionLogprobs {
  text_offset: number[];
  /** Null for a token without a logprob (the first prompt token when `echo` adds the prompt's). */
  token_logprobs: Array<number | null>;
  tokens: string[];
  top_logprobs: Array<Record<string, number> | null>;
}

/** Completions logprobs of recorded tokens, with text offsets counted from `offset`. */
export function completionLogprobs(
  tokenizer: SimTokenizer,
  recorded: ReadonlyArray<readonly TokenChoice[]>,
  deltas: readonly string[],
  topLogprobs: number,
  offset = 0,
): CompletionLogprobs {
  const out: CompletionLogprobs = {
    text_offset: [],
    token_logprobs: [],
    tokens: [],
    top_logprobs: [],
  };
  let position = offset;
  recorded.forEach((choices, i) => {
    const listed = choices.slice(0, Math.max(1, topLogprobs));
    out.text_offset.push(position);
    out.token_logprobs.push(choices[0]!.logprob);
    out.tokens.push(tokenText(tokenizer, choices[0]!.id));
    out.top_logprobs.push(
      Object.fromEntries(listed.map((c) => [tokenText(tokenizer, c.id), c.logprob])),
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
  const promptSeed = hashParts(seed, "prompt");
  const recorded = promptIds.map((id, i) =>
    tokenChoices(tokenizer, promptSeed, i, id, Math.max(1, topLogprobs)),
  );
  const out = completionLogprobs(tokenizer, recorded, strings, topLogprobs);
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
