/**
 * @module Stop strings checked across a cut (partial rollouts). vLLM matches stop strings in one
 * request's output text, so a continuation (a new request from token ids) cannot see a stop string
 * that began before the cut. The gateway therefore checks the whole call's text itself, the way
 * vLLM's detokenizer does (vllm/v1/engine/detokenizer.py `update` and StopChecker's
 * `check_stop_strings`): after each chunk it searches only the window the new text can complete
 * (`1 - new_chars - len(stop)` back from the end), in the order the stop strings were given, and
 * never before `min_tokens`; a match cuts the text before the stop string, or after it with
 * `include_stop_str_in_output`. While streaming it holds back `longest stop - 1` characters
 * (`get_next_output_text`'s `stop_buffer_length`), so nothing sent is ever text a stop string
 * removes. The text is the raw output (reasoning, `</think>`, content), as vLLM checks it before
 * its reasoning parser splits it; the tag itself is never sent.
 */

/** The field a stretch of the raw text goes out in; `tag` (the think block's end) is never sent. */
type Span = { from: number; field: "reasoning" | "content" | "tag" };

/** The think block's end tag (Qwen3, DeepSeek-R1), which the chat endpoint's parser removes. */
const END_TAG = "</think>";

/** What may be sent after a push: reasoning and content in order, and the stop string if one matched. */
export interface StopRelease {
  reasoning: string;
  content: string;
  stop: string | null;
}

/** How a call's stop strings apply (its request's `stop`, `include_stop_str_in_output`, `min_tokens`). */
export interface StopOptions {
  stop: readonly string[];
  includeInOutput: boolean;
  minTokens: number;
}

/** The stop strings of a chat request body, or null when it has none (an empty string is no stop). */
export function stopOptionsOf(body: Record<string, unknown>): StopOptions | null {
  const raw = body.stop;
  const stop = (typeof raw === "string" ? [raw] : Array.isArray(raw) ? raw : []).filter(
    (s): s is string => typeof s === "string" && s !== "",
  );
  if (stop.length === 0) return null;
  return {
    stop,
    includeInOutput: body.include_stop_str_in_output === true,
    minTokens: typeof body.min_tokens === "number" ? body.min_tokens : 0,
  };
}

function partialTag(text: string): number {
  for (let n = Math.min(END_TAG.length - 1, text.length); n > 0; n--)
    if (text.endsWith(END_TAG.slice(0, n))) return n;
  return 0;
}

/** One call's output text across its legs, checked for stop strings as it grows. */
export class StopWindow {
  readonly #options: StopOptions;
  readonly #hold: number;
  #raw = "";
  #spans: Span[] = [];
  #sent = 0;
  #tokens = 0;
  #inReasoning = false;
  #stopAt: number | null = null;
  #stop: string | null = null;

  constructor(options: StopOptions) {
    this.#options = options;
    // vLLM holds nothing back when the stop string is to be sent anyway.
    this.#hold = options.includeInOutput ? 0 : Math.max(...options.stop.map((s) => s.length)) - 1;
  }

  /** The stop string that ended the call, once one matched. */
  get stopped(): string | null {
    return this.#stop;
  }

  /** A chunk of the first leg (a chat stream, already split by the server's reasoning parser). */
  pushFields(reasoning: string, content: string, tokens: number): StopRelease {
    const before = this.#raw.length;
    if (reasoning !== "") {
      this.#append(reasoning, "reasoning");
      this.#inReasoning = true;
    }
    if (content !== "") {
      if (this.#inReasoning) this.#append(END_TAG, "tag");
      this.#inReasoning = false;
      this.#append(content, "content");
    }
    return this.#check(before, tokens);
  }

  /**
   * A continuation's raw text (a completions stream: no parser ran on it). Inside the think block
   * it is reasoning up to `</think>` and content after it, as the chat endpoint would have split it.
   */
  pushRaw(text: string, tokens: number): StopRelease {
    const before = this.#raw.length;
    if (!this.#inReasoning) {
      this.#append(text, "content");
      return this.#check(before, tokens);
    }
    this.#append(text, "reasoning");
    // The tag may have begun in an earlier chunk: those characters were held back, never sent.
    const at = this.#raw.indexOf(END_TAG, Math.max(this.#sent, before - END_TAG.length + 1));
    if (at >= 0) {
      this.#inReasoning = false;
      this.#spans = this.#spans.filter((span) => span.from < at);
      this.#spans.push({ from: at, field: "tag" }, { from: at + END_TAG.length, field: "content" });
    }
    return this.#check(before, tokens);
  }

  /**
   * The upstream finished (its own finish reason): everything held back is sent. `upstreamStop` is
   * a stop string the server matched where this window could not (one spanning a `<think>` the
   * parser removed): the server sent it (the gateway asks for it in the output), so what of it
   * this window saw is cut here.
   */
  finish(upstreamStop: string | null): StopRelease {
    if (this.#stopAt === null && upstreamStop !== null) {
      this.#stop = upstreamStop;
      let seen = Math.min(upstreamStop.length, this.#raw.length);
      while (seen > 0 && !this.#raw.endsWith(upstreamStop.slice(upstreamStop.length - seen)))
        seen--;
      this.#stopAt = this.#options.includeInOutput ? this.#raw.length : this.#raw.length - seen;
    }
    return this.#release(this.#stopAt ?? this.#raw.length);
  }

  #append(text: string, field: Span["field"]): void {
    if (this.#spans.at(-1)?.field !== field) this.#spans.push({ from: this.#raw.length, field });
    this.#raw += text;
  }

  #check(before: number, tokens: number): StopRelease {
    this.#tokens += tokens;
    if (this.#stopAt === null && this.#tokens > this.#options.minTokens) {
      for (const stop of this.#options.stop) {
        const at = this.#raw.indexOf(stop, Math.max(0, before - stop.length + 1));
        if (at < 0) continue;
        this.#stop = stop;
        this.#stopAt = this.#options.includeInOutput ? at + stop.length : at;
        break;
      }
    }
    if (this.#stopAt !== null) return this.#release(this.#stopAt);
    const hold = Math.max(this.#hold, this.#inReasoning ? partialTag(this.#raw) : 0);
    return this.#release(this.#raw.length - hold);
  }

  #release(upTo: number): StopRelease {
    const out = { reasoning: "", content: "", stop: this.#stop };
    for (let i = 0; i < this.#spans.length; i++) {
      const span = this.#spans[i]!;
      const end = Math.min(this.#spans[i + 1]?.from ?? Infinity, upTo);
      const start = Math.max(span.from, this.#sent);
      if (end <= start || span.field === "tag") continue;
      out[span.field] += this.#raw.slice(start, end);
    }
    this.#sent = Math.max(this.#sent, upTo);
    return out;
  }
}
