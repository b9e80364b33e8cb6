/**
 * @module The reasoning parser (`vllm serve --reasoning-parser qwen3`): splits `<think>…</think>`
 * off the generated text, whole (vllm/reasoning/qwen3_reasoning_parser.py `extract_reasoning`) or
 * as it grows while streaming, and names the field(s) the reasoning goes out in. Two generations
 * of the parser: "current" (the Qwen3/Qwen3.5 parser: `<think>` optional, a missing `</think>`
 * means truncated reasoning unless `enable_thinking` is false) and "legacy" (both tags needed,
 * else everything is content), chosen by `compat.qwen3Parser`.
 */
import type { CompatConfig } from "./options";

const START = "<think>";
const END = "</think>";

/** How the parser reads one request's output; null when the server runs no reasoning parser. */
export type ReasoningMode = {
  /** `chat_template_kwargs.enable_thinking` (the parser's default is true). */
  thinkingEnabled: boolean;
  /** Which generation of the parser (see the module comment). */
  parser: "current" | "legacy";
} | null;

/** The mode of a request under the server's config: null without `--reasoning-parser`. */
export function reasoningModeOf(
  config: { reasoningParser: boolean; compat: Pick<CompatConfig, "qwen3Parser"> },
  kwargs: Record<string, unknown> | null | undefined,
): ReasoningMode {
  if (!config.reasoningParser) return null;
  return { thinkingEnabled: kwargs?.enable_thinking !== false, parser: config.compat.qwen3Parser };
}

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
export function splitReasoning(
  text: string,
  mode: NonNullable<ReasoningMode> = { thinkingEnabled: true, parser: "legacy" },
): ReasoningSplit {
  if (mode.parser === "current") return splitCurrent(text, mode.thinkingEnabled);
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < 0 || end < start)
    return { reasoning: null, content: text === "" ? null : text };
  const content = text.slice(end + END.length);
  return {
    reasoning: text.slice(start + START.length, end),
    content: content === "" ? null : content,
  };
}

/** Qwen3ReasoningParser.extract_reasoning as of the Qwen3.5 rework. */
function splitCurrent(text: string, thinkingEnabled: boolean): ReasoningSplit {
  // partition("<think>"): what follows the first <think>, or all of it when there is none.
  const start = text.indexOf(START);
  const output = start >= 0 ? text.slice(start + START.length) : text;
  const end = output.indexOf(END);
  if (end >= 0) {
    const content = output.slice(end + END.length);
    return { reasoning: output.slice(0, end), content: content === "" ? null : content };
  }
  if (!thinkingEnabled) return { reasoning: null, content: output };
  // A <tool_call> ends reasoning only when a Qwen3.5 `<function=…>` follows it; hermes JSON does not.
  const call = output.indexOf("<tool_call>");
  if (call >= 0 && /^<function[\s=]/.test(output.slice(call + "<tool_call>".length).trimStart())) {
    return { reasoning: output.slice(0, call) || null, content: output.slice(call) || null };
  }
  // No </think> while thinking: the output was cut off, and all of it is reasoning.
  return { reasoning: output, content: null };
}

/** How far the streamed text has got: the reasoning and the content seen so far. */
export interface PartialSplit {
  reasoning: string;
  content: string;
}

function heldBack(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--)
    if (text.endsWith(tag.slice(0, n))) return n;
  return 0;
}

/**
 * The split of a prefix of the output, for streaming: text that might still become a tag is held
 * back, so deltas never carry half a `<think>` or `</think>`.
 */
export function splitReasoningSoFar(
  text: string,
  mode: NonNullable<ReasoningMode> = { thinkingEnabled: true, parser: "legacy" },
): PartialSplit {
  if (mode.parser === "current") return splitCurrentSoFar(text, mode.thinkingEnabled);
  if (!text.startsWith(START)) {
    if (START.startsWith(text)) return { reasoning: "", content: "" };
    return { reasoning: "", content: text };
  }
  const inner = text.slice(START.length);
  const end = inner.indexOf(END);
  if (end < 0)
    return { reasoning: inner.slice(0, inner.length - heldBack(inner, END)), content: "" };
  return { reasoning: inner.slice(0, end), content: inner.slice(end + END.length) };
}

/**
 * The current parser while streaming: with thinking disabled the prompt already closed the think
 * block (vLLM's prompt_is_reasoning_end), so everything is content; otherwise a `<think>` is
 * dropped and everything before `</think>` is reasoning.
 */
function splitCurrentSoFar(text: string, thinkingEnabled: boolean): PartialSplit {
  if (!thinkingEnabled) return { reasoning: "", content: text };
  const start = text.indexOf(START);
  let inner = text;
  if (start >= 0) inner = text.slice(start + START.length);
  else if (START.startsWith(text)) return { reasoning: "", content: "" };
  const end = inner.indexOf(END);
  if (end < 0)
    return { reasoning: inner.slice(0, inner.length - heldBack(inner, END)), content: "" };
  return { reasoning: inner.slice(0, end), content: inner.slice(end + END.length) };
}

/** The message/delta fields that carry `reasoning` under the server's compat setting. */
export function reasoningFields(
  reasoning: string | null,
  compat: Pick<CompatConfig, "reasoningField">,
): Record<string, string | null> {
  switch (compat.reasoningField) {
    case "reasoning":
      return { reasoning };
    case "reasoning_content":
      return { reasoning_content: reasoning };
    case "both":
      return { reasoning, reasoning_content: reasoning };
  }
}
