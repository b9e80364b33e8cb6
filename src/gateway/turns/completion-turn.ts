/**
 * @module A continued turn's answer, read as a chat turn. The continuation went upstream as a text
 * completion from token ids, so the server's reasoning and tool parsers (which run on the chat
 * endpoint only) never saw it: this does what vLLM's `qwen3` reasoning parser and `hermes` tool
 * parser do with the whole output. A `<tool_call>` block whose JSON the policy got wrong stays in
 * the text, as vLLM's parser leaves it: the harness sees the model's mistake, never a 5xx.
 */
import type { ChatMessage, ToolCall } from "../../schemas/chat";

const THINK_END = "</think>";
const TOOL_CALL = /<tool_call>([\s\S]*?)<\/tool_call>/g;

/** A text completion split as the chat endpoint would have answered it. */
export interface ParsedTurn {
  message: ChatMessage;
  /** `tool_calls` when the answer called tools, else the completion's own reason. */
  finish_reason: string | null;
}

function parsedCall(body: string): { name: string; arguments: unknown } | null {
  try {
    const value = JSON.parse(body.trim()) as { name?: unknown; arguments?: unknown };
    if (typeof value?.name !== "string" || value.name === "") return null;
    const args = value.arguments ?? {};
    if (typeof args !== "object" || args === null || Array.isArray(args)) return null;
    return { name: value.name, arguments: args };
  } catch {
    return null;
  }
}

/**
 * Splits `text` into reasoning (up to `</think>`, without the tags), content and hermes tool calls;
 * `idOf(i)` names the i-th call (the id the harness will send back with the call's result).
 */
export function parseCompletionTurn(
  text: string,
  finishReason: string | null,
  idOf: (index: number) => string,
): ParsedTurn {
  let reasoning: string | null = null;
  let rest = text;
  const end = text.indexOf(THINK_END);
  if (end >= 0) {
    reasoning = text
      .slice(0, end)
      .replace(/^\s*<think>/, "")
      .trim();
    rest = text.slice(end + THINK_END.length);
  }
  const calls: ToolCall[] = [];
  let firstCall = -1;
  let valid = true;
  for (const match of rest.matchAll(TOOL_CALL)) {
    if (firstCall < 0) firstCall = match.index;
    const call = parsedCall(match[1]!);
    if (!call) {
      valid = false;
      break;
    }
    calls.push({
      id: idOf(calls.length),
      type: "function",
      function: { name: call.name, arguments: JSON.stringify(call.arguments) },
    });
  }
  const withCalls = valid && calls.length > 0;
  const content = (withCalls ? rest.slice(0, firstCall) : rest).trim();
  const message: ChatMessage = {
    role: "assistant",
    content: content === "" && withCalls ? null : content,
    ...(reasoning === null ? {} : { reasoning_content: reasoning }),
    ...(withCalls ? { tool_calls: calls } : {}),
  };
  return { message, finish_reason: withCalls ? "tool_calls" : finishReason };
}
