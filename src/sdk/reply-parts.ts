/**
 * @module The seed's reading of a model reply: `thought` is the reasoning (the text in `<think>`
 * tags when the server returned no separate reasoning), `action` the `<tool_call>` content.
 */
import type { ChatMessage } from "../schemas/chat";
import type { JsonValue } from "../schemas/json";

const THINK = /<think>([\s\S]*?)<\/think>/;
const TOOL_CALL = /<tool_call>([\s\S]*?)<\/tool_call>/g;

function textOf(message: ChatMessage): string {
  return typeof message.content === "string" ? message.content : "";
}

/**
 * The reply's reasoning: `reasoning_content` when the server split it off (vLLM with a reasoning
 * parser), else the text inside `<think>…</think>` in the content, else the text before a lone
 * `</think>` (Qwen3's template may open the block in the prompt), else "". Trimmed.
 */
export function thoughtOf(message: ChatMessage): string {
  if (typeof message.reasoning_content === "string" && message.reasoning_content !== "")
    return message.reasoning_content.trim();
  const text = textOf(message);
  const block = THINK.exec(text);
  if (block) return block[1]!.trim();
  const end = text.indexOf("</think>");
  return end >= 0 ? text.slice(0, end).trim() : "";
}

/** One `<tool_call>` body: its JSON (hermes format: `{"name", "arguments"}`), or the raw text when it is not JSON. */
function parseBody(body: string): JsonValue {
  try {
    return JSON.parse(body) as JsonValue;
  } catch {
    return body.trim();
  }
}

/**
 * The reply's tool calls as the seed's `action`: the server's parsed `tool_calls` (vLLM with a tool
 * parser) as `{name, arguments}` objects, else the bodies of the `<tool_call>` blocks left in the
 * content (no tool parser), else null. Always a list when not null.
 */
export function toolCallAction(message: ChatMessage): JsonValue[] | null {
  const calls = message.tool_calls ?? [];
  if (calls.length > 0)
    return calls.map((call) => ({
      name: call.function.name,
      arguments: parseBody(call.function.arguments),
    }));
  const bodies = [...textOf(message).matchAll(TOOL_CALL)].map((match) =>
    parseBody(match[1]!.trim()),
  );
  return bodies.length > 0 ? bodies : null;
}
