/**
 * @module The prompt of a continued turn, from token ids. The previous call's prompt ids and the
 * ids the model sampled stay as they were; only what follows (the template's glue after the
 * model's last token, then the new messages and the generation prompt) comes from rendering. The
 * renderer is the backend's own (`/tokenize` with `messages`, the template the server applies to a
 * chat call), asked twice: the conversation up to the previous answer (closed, no generation
 * prompt) and the whole new one. Their difference is the new part, as long as the first is a prefix
 * of the second; a template that rewrites history (Qwen3 drops an earlier turn's `<think>` once a
 * new user query follows) breaks that, and the call is then rendered whole, as a chat call: the
 * sample builder counts the split.
 */

/** The longest glue the template may put after the model's last token (`<|im_end|>` then `\n`: 1). */
const MAX_GLUE_TOKENS = 8;

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
export type ContinuedPrompt = { ids: number[]; glue: number; tail: number } | { drift: string };

function startsWith(values: readonly number[], prefix: readonly number[]): boolean {
  if (prefix.length > values.length) return false;
  for (let i = 0; i < prefix.length; i++) if (values[i] !== prefix[i]) return false;
  return true;
}

/**
 * previous prompt + sampled ids + glue + new part, where glue is what the template renders after
 * the model's last token (its stop token) and the new part is `full` past `history`.
 */
export function continuedPrompt(previous: PreviousIds, rendered: Renderings): ContinuedPrompt {
  const sampled = previous.completion_token_ids;
  if (sampled.length === 0) return { drift: "the previous answer has no token ids" };
  if (!startsWith(rendered.full, rendered.history))
    return { drift: "the template renders the earlier conversation differently now" };
  const last = sampled[sampled.length - 1]!;
  const at = rendered.history.lastIndexOf(last);
  if (at < 0 || rendered.history.length - 1 - at > MAX_GLUE_TOKENS)
    return { drift: "the template does not end the previous answer with its last sampled token" };
  const glue = rendered.history.slice(at + 1);
  const tail = rendered.full.slice(rendered.history.length);
  const ids: number[] = [];
  for (const part of [previous.prompt_token_ids, sampled, glue, tail])
    for (const id of part) ids.push(id);
  return { ids, glue: glue.length, tail: tail.length };
}
