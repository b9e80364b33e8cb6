/**
 * @module The text of each token of an id list, asked of the vLLM server that produced them.
 * vLLM has no "ids → token strings" endpoint: `/detokenize` turns the ids into one text, and
 * `/tokenize` with `return_token_strs` splits that text back into ids and vocabulary pieces. The
 * pieces are used only when the round trip gives back exactly the same ids (never a re-tokenized
 * guess); otherwise there is no answer. Two requests per id list, made when a person looks (the
 * dashboard), never on a rollout's call.
 */
import { z } from "zod";
import { postUpstreamJson } from "./upstream-call";
import { pieceText } from "./token-pieces";

const DetokenizeReply = z.looseObject({ prompt: z.string() });
const TokenizeReply = z.looseObject({
  tokens: z.array(z.int()),
  token_strs: z.array(z.string()).nullish(),
});

/** Where and how to ask: the server root (no `/v1`), the model name the calls used, its key. */
export interface TokenTextSource {
  root: string;
  model: string | undefined;
  apiKey?: string | undefined;
  timeoutMs?: number;
}

/**
 * One text per id (special tokens spelt out, part of a UTF-8 character as U+FFFD), or null when
 * the server cannot say (no `/tokenize`, no `token_strs`, or the text does not split back into
 * the same ids). Transport failures also give null: the caller shows ids instead.
 */
export async function fetchTokenTexts(
  fetcher: typeof fetch,
  source: TokenTextSource,
  ids: readonly number[],
): Promise<string[] | null> {
  if (ids.length === 0) return [];
  const options = { apiKey: source.apiKey, timeoutMs: source.timeoutMs ?? 10_000 };
  try {
    const text = DetokenizeReply.parse(
      await postUpstreamJson(
        fetcher,
        `${source.root}/detokenize`,
        { model: source.model, tokens: ids },
        options,
      ),
    ).prompt;
    // add_special_tokens false: the ids already hold whatever BOS the template put there.
    const split = TokenizeReply.parse(
      await postUpstreamJson(
        fetcher,
        `${source.root}/tokenize`,
        { model: source.model, prompt: text, add_special_tokens: false, return_token_strs: true },
        options,
      ),
    );
    const strs = split.token_strs;
    if (
      !strs ||
      strs.length !== ids.length ||
      split.tokens.length !== ids.length ||
      split.tokens.some((id, i) => id !== ids[i])
    )
      return null;
    return strs.map(pieceText);
  } catch {
    return null;
  }
}
