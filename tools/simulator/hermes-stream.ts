/**
 * @module Streaming tool-call deltas the way vLLM's hermes parser emits them: content before
 * the first `<tool_call>`, then per call a delta with `id`, `type` and the function name, then
 * argument text as raw slices of what the model wrote (no re-serialisation while streaming).
 */
import { randomUUID } from "node:crypto";

/** One element of `delta.tool_calls`. */
export interface DeltaToolCall {
  index: number;
  id?: string;
  type?: "function";
  function: { name?: string; arguments?: string };
}

/** What one step adds, or undefined when nothing new can be sent yet. */
export interface HermesDelta {
  content: string | null;
  tool_calls: DeltaToolCall[];
}

const START = "<tool_call>";
const END = "</tool_call>";

/** vLLM's tool-call id format: `chatcmpl-tool-` and 32 hex digits. */
export function makeToolCallId(): string {
  return `chatcmpl-tool-${randomUUID().replaceAll("-", "")}`;
}

/** Length of the longest suffix of `text` that is a proper prefix of `tag`. */
function partialOverlap(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) {
    if (text.endsWith(tag.slice(0, n))) return n;
  }
  return 0;
}

/** The `arguments` value of a (possibly partial) call JSON, found by brace matching. */
function argumentsText(json: string): string | undefined {
  const match = /"arguments"\s*:\s*/.exec(json);
  if (!match) return undefined;
  return jsonValueText(json.slice(match.index + match[0].length));
}

/**
 * The object or array that `raw` starts with, up to its closing bracket, or all of `raw` while it
 * is still open; undefined unless `raw` starts with `{` or `[`.
 */
export function jsonValueText(raw: string): string | undefined {
  if (raw === "" || (raw[0] !== "{" && raw[0] !== "[")) return undefined;
  const open = raw[0];
  const close = open === "{" ? "}" : "]";
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === "\\") escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === open) depth++;
    else if (c === close && --depth === 0) return raw.slice(0, i + 1);
  }
  return raw;
}

/** Stateful: feed it the whole text generated so far after each token. */
export class HermesStreamParser {
  #sentContent = 0;
  readonly #calls: Array<{ name?: string; sentArgs: string }> = [];

  /** Whether any tool-call delta has been produced. */
  get calledTools(): boolean {
    return this.#calls.some((call) => call.name !== undefined);
  }

  /** The delta that `text` (everything generated so far) adds. */
  update(text: string): HermesDelta | undefined {
    const start = text.indexOf(START);
    const sendable = start >= 0 ? start : text.length - partialOverlap(text, START);
    let content: string | null = null;
    if (sendable > this.#sentContent) {
      content = text.slice(this.#sentContent, sendable);
      this.#sentContent = sendable;
    }
    const deltas: DeltaToolCall[] = [];
    let pos = 0;
    for (let index = 0; ; index++) {
      const open = text.indexOf(START, pos);
      if (open < 0) break;
      const close = text.indexOf(END, open + START.length);
      const json = text.slice(open + START.length, close < 0 ? undefined : close).trim();
      const call = (this.#calls[index] ??= { sentArgs: "" });
      if (call.name === undefined) {
        const name = /"name"\s*:\s*"([^"]+)"/.exec(json)?.[1];
        if (name === undefined) break;
        call.name = name;
        deltas.push({ index, type: "function", id: makeToolCallId(), function: { name } });
      }
      const args = argumentsText(json);
      if (args !== undefined && args.length > call.sentArgs.length) {
        deltas.push({ index, function: { arguments: args.slice(call.sentArgs.length) } });
        call.sentArgs = args;
      }
      if (close < 0) break;
      pos = close + END.length;
    }
    return content !== null || deltas.length > 0 ? { content, tool_calls: deltas } : undefined;
  }
}
