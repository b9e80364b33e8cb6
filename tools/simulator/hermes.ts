/**
 * @module Hermes tool-call text: parsing a completion the way vLLM's `hermes` tool parser does,
 * and printing tool arguments the way Python's `json.dumps` does.
 */

/** A parsed `<tool_call>` block. */
export interface ParsedToolCall {
  name: string;
  /** The arguments object as the model wrote it. */
  arguments: Record<string, unknown>;
}

/** A completion split into what the client sees. */
export interface ParsedCompletion {
  /** Text before the first `<tool_call>`; null when that is empty and a tool was called. */
  content: string | null;
  toolCalls: ParsedToolCall[];
}

const TOOL_CALL_START = "<tool_call>";
const TOOL_CALL_BLOCK = /<tool_call>([\s\S]*?)<\/tool_call>|<tool_call>([\s\S]*)/g;

/**
 * Splits model output like vLLM's hermes parser: every `<tool_call>` block must hold JSON with
 * `name` and `arguments`, else the whole output is returned as content (as vLLM does on a
 * parse failure, e.g. a call cut off by max_tokens).
 */
export function parseHermesOutput(text: string): ParsedCompletion {
  const start = text.indexOf(TOOL_CALL_START);
  if (start < 0) return { content: text, toolCalls: [] };
  const toolCalls: ParsedToolCall[] = [];
  for (const match of text.matchAll(TOOL_CALL_BLOCK)) {
    const body = match[1] ?? match[2] ?? "";
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return { content: text, toolCalls: [] };
    }
    if (!isCall(parsed)) return { content: text, toolCalls: [] };
    toolCalls.push({ name: parsed.name, arguments: parsed.arguments });
  }
  const content = text.slice(0, start);
  return { content: content === "" ? null : content, toolCalls };
}

function isCall(value: unknown): value is ParsedToolCall {
  if (typeof value !== "object" || value === null) return false;
  const { name, arguments: args } = value as Record<string, unknown>;
  return (
    typeof name === "string" && typeof args === "object" && args !== null && !Array.isArray(args)
  );
}

/**
 * `JSON.stringify` with Python's default separators (`", "` and `": "`) and non-ASCII kept,
 * because vLLM re-serialises parsed tool arguments with `json.dumps(..., ensure_ascii=False)`.
 */
export function pythonJsonDumps(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map((item) => pythonJsonDumps(item)).join(", ")}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(
    ([, v]) => v !== undefined,
  );
  return `{${entries.map(([key, v]) => `${JSON.stringify(key)}: ${pythonJsonDumps(v)}`).join(", ")}}`;
}
