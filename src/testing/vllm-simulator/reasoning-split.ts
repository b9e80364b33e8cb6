/**
 * @module The reasoning parser (`vllm serve --reasoning-parser qwen3`): splits `<think>…</think>`
 * off the generated text, whole (vllm/reasoning/qwen3_reasoning_parser.py `extract_reasoning`) or
 * as it grows while streaming, and names the field(s) the reasoning goes out in.
 */
import type { CompatConfig } from "./options";

const START = "<think>";
const END = "</think>";

/** Generated text split like vLLM's qwen3 parser. */
export interface ReasoningSplit {
  /** Text inside the think block, or null when the block is absent or unfinished. */
  reasoning: string | null;
  /** What follows the block; null when empty. Without a finished block, the whole text. */
  content: string | null;
}

/**
 * The whole-output split: without both tags the output is all content (Qwen3 answered without
 * thinking, or the block was cut off by max_tokens); else reasoning between them, content after.
 */
export function splitReasoning(text: string): ReasoningSplit {
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < 0 || end < start) return { reasoning: null, content: text === "" ? null : text };
  const content = text.slice(end + END.length);
  return { reasoning: text.slice(start + START.length, end), content: content === "" ? null : content };
}

/** How far the streamed text has got: the reasoning and the content seen so far. */
export interface PartialSplit {
  reasoning: string;
  content: string;
}

function heldBack(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) if (text.endsWith(tag.slice(0, n))) return n;
  return 0;
}

/**
 * The split of a prefix of the output, for streaming: text that might still become a tag is held
 * back, so deltas never carry half a `<think>` or `</think>`.
 */
export function splitReasoningSoFar(text: string): PartialSplit {
  if (!text.startsWith(START)) {
    if (START.startsWith(text)) return { reasoning: "", content: "" };
    return { reasoning: "", content: text };
  }
  const inner = text.slice(START.length);
  const end = inner.indexOf(END);
  if (end < 0) return { reasoning: inner.slice(0, inner.length - heldBack(inner, END)), content: "" };
  return { reasoning: inner.slice(0, end), content: inner.slice(end + END.length) };
}

/** The message/delta fields that carry `reasoning` under the server's compat setting. */
export function reasoningFields(reasoning: string | null, compat: Pick<CompatConfig, "reasoningField">): Record<string, string | null> {
  switch (compat.reasoningField) {
    case "reasoning":
      return { reasoning };
    case "reasoning_content":
      return { reasoning_content: reasoning };
    case "both":
      return { reasoning, reasoning_content: reasoning };
  }
}
