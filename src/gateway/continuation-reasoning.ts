/**
 * @module Where a resumed call's text goes. A continuation is a text-completions request (from
 * token ids), so the server's reasoning parser, which only runs on the chat endpoint, never sees
 * it: its raw text still holds the rest of the think block and the `</think>` tag. A call cut while
 * its reasoning streamed (reasoning sent, no content yet) keeps sending the continuation's text as
 * reasoning up to the tag, and as content after it, the way vLLM's qwen3 / deepseek_r1 parsers
 * split the whole output; the tag itself is never sent. Text that may be the start of the tag is
 * held back until the next chunk tells, as the parsers do when streaming.
 */

/** The tag that ends a think block (Qwen3, DeepSeek-R1). */
const END = "</think>";

/** The field a reasoning delta goes out in: the one the server used for the call's first leg. */
export type ReasoningField = "reasoning" | "reasoning_content";

/** One chunk's text, split. */
export interface ContinuationDelta {
  reasoning: string;
  content: string;
}

/** How many characters at the end of `text` could begin the tag. */
function partialTag(text: string): number {
  for (let n = Math.min(END.length - 1, text.length); n > 0; n--)
    if (text.endsWith(END.slice(0, n))) return n;
  return 0;
}

/** Splits a continuation's text as it streams. */
export class ContinuationReasoning {
  #inReasoning: boolean;
  #held = "";

  /** `inReasoning`: the call was cut inside its think block (its reasoning streamed, no content yet). */
  constructor(inReasoning: boolean) {
    this.#inReasoning = inReasoning;
  }

  /** The next chunk's text; `last` flushes what was held back (the stream ends). */
  take(text: string, last: boolean): ContinuationDelta {
    if (!this.#inReasoning) return { reasoning: "", content: text };
    const buffered = this.#held + text;
    const end = buffered.indexOf(END);
    if (end >= 0) {
      this.#inReasoning = false;
      this.#held = "";
      return { reasoning: buffered.slice(0, end), content: buffered.slice(end + END.length) };
    }
    const hold = last ? 0 : partialTag(buffered);
    this.#held = buffered.slice(buffered.length - hold);
    return { reasoning: buffered.slice(0, buffered.length - hold), content: "" };
  }
}
