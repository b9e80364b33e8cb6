/**
 * @module The prompt of a continued turn, from token ids. The previous call's prompt ids and the
 * ids the model sampled stay as they were; only what follows them (the template's glue after the
 * answer's stop token, then the new messages and the generation prompt) comes from rendering. The
 * renderer is the backend's own (`/tokenize` with `messages`: the template the server applies to a
 * chat call), asked twice: the conversation up to the previous answer (`history`, closed, no
 * generation prompt) and the whole new one (`full`).
 *
 * The new part is found by counting turn ends: every turn of a ChatML-style template closes with
 * the stop token the model ends its answers with (`<|im_end|>`), which text never contains. If the
 * history has `s` of them, the answer's is the s-th, and the new part is everything after the s-th
 * in `full`. Counting, not comparing renderings, because a template renders the same answer
 * differently as the last message than inside a conversation (Qwen3 writes an empty think block
 * only on the last one). A template that renders the *earlier* conversation differently once more
 * follows (Qwen3 drops earlier turns' `<think>` after a new user query) forces a split: then the
 * call is rendered whole, as a chat call, and the sample builder counts the split.
 */

/** The ids of the call being continued. */
export interface PreviousIds {
  prompt_token_ids: readonly number[];
  completion_token_ids: readonly number[];
}

/** Renderings of the conversation by the backend's template. */
export interface Renderings {
  /** Up to and including the previous answer, closed, without a generation prompt. */
  history: readonly number[];
  /** The whole new conversation with the generation prompt. */
  full: readonly number[];
}

/** The new prompt's ids, or why they cannot be built from the previous ids. */
export type ContinuedPrompt = { ids: number[]; added: number } | { drift: string };

/** Index of the `nth` (1-based) occurrence of `id` in `ids`, or -1. */
function nthIndex(ids: readonly number[], id: number, nth: number): number {
  let seen = 0;
  for (let i = 0; i < ids.length; i++) if (ids[i] === id && ++seen === nth) return i;
  return -1;
}

function count(ids: readonly number[], id: number): number {
  let n = 0;
  for (const value of ids) if (value === id) n++;
  return n;
}

/** previous prompt + sampled ids + what `full` renders after the previous answer's turn end. */
export function continuedPrompt(previous: PreviousIds, rendered: Renderings): ContinuedPrompt {
  const sampled = previous.completion_token_ids;
  if (sampled.length === 0) return { drift: "the previous answer has no token ids" };
  const stop = sampled[sampled.length - 1]!;
  const turns = count(rendered.history, stop);
  if (turns === 0 || rendered.history[rendered.history.length - 1] === undefined)
    return { drift: "the previous answer did not end with the template's turn end" };
  // The earlier conversation (every turn before the answer) must render as it did.
  const before = turns === 1 ? -1 : nthIndex(rendered.history, stop, turns - 1);
  for (let i = 0; i <= before; i++)
    if (rendered.full[i] !== rendered.history[i])
      return { drift: "the template renders the earlier conversation differently now" };
  const answerEnd = nthIndex(rendered.full, stop, turns);
  if (answerEnd < 0) return { drift: "the template does not close the previous answer" };
  const ids: number[] = [];
  for (const part of [previous.prompt_token_ids, sampled]) for (const id of part) ids.push(id);
  for (let i = answerEnd + 1; i < rendered.full.length; i++) ids.push(rendered.full[i]!);
  return { ids, added: rendered.full.length - answerEnd - 1 };
}
