/**
 * @module The simulator's chat template: Qwen-style ChatML with hermes tool calls, rendered
 * straight to token ids.
 *
 * Every piece (role header, content, each tool call, each delimiter) is tokenized on its own
 * and the ids concatenated, so text on either side of a boundary never merges into one token.
 * That is what makes the template append-only: the ids a completion returns are exactly the
 * ids its assistant message renders to when the next request replays it.
 */
import type { ParsedToolCall } from "./hermes";
import {
  type ChatMessageParam,
  type ToolCallParam,
  type ToolParam,
  contentText,
} from "./request-schemas";
import { EOS_TOKEN_ID, IM_START_TOKEN_ID, encode } from "./tokenizer";

/** Options of `renderChatPrompt`. */
export interface RenderChatOptions {
  /** Tools described in the system turn. Default none. */
  tools?: readonly ToolParam[] | null | undefined;
  /** End with `<|im_start|>assistant\n`. Default true. */
  addGenerationPrompt?: boolean | null | undefined;
  /**
   * Drop `<think>…</think>` from assistant messages of the history, as Qwen3's template does.
   * This makes the template no longer append-only. Default false.
   */
  stripThinkInHistory?: boolean | undefined;
}

/** The `# Tools` section Qwen appends to the system turn when tools are offered. */
export function toolsBlockText(tools: readonly ToolParam[]): string {
  const lines = tools.map((tool) => JSON.stringify({ type: tool.type, function: tool.function }));
  return (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n" +
    `${lines.join("\n")}\n</tools>\n\n` +
    "For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n" +
    '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
  );
}

/** One tool call as the model writes it: `<tool_call>\n{"name":…,"arguments":{…}}\n</tool_call>`. */
export function toolCallBlockText(call: ParsedToolCall): string {
  return `<tool_call>\n${JSON.stringify({ name: call.name, arguments: call.arguments })}\n</tool_call>`;
}

/**
 * Ids of an assistant turn's body (between `<|im_start|>assistant\n` and `<|im_end|>`, both
 * excluded). The simulator's model emits exactly these ids, then EOS.
 */
export function renderAssistantBody(
  content: string,
  toolCalls: readonly ParsedToolCall[],
): number[] {
  const ids = encode(content);
  for (const call of toolCalls) append(ids, encode(toolCallBlockText(call)));
  return ids;
}

function historyToolCallIds(call: ToolCallParam): number[] {
  let args: unknown;
  try {
    args = JSON.parse(call.function.arguments);
  } catch {
    args = undefined;
  }
  if (typeof args === "object" && args !== null && !Array.isArray(args)) {
    return encode(
      toolCallBlockText({ name: call.function.name, arguments: args as Record<string, unknown> }),
    );
  }
  // Not a JSON object: splice the raw string in, as Qwen's template does for string arguments.
  const raw = `<tool_call>\n{"name":${JSON.stringify(call.function.name)},"arguments":${call.function.arguments}}\n</tool_call>`;
  return encode(raw);
}

function stripThink(content: string): string {
  const end = content.lastIndexOf("</think>");
  if (end < 0) return content;
  return content.slice(end + "</think>".length).replace(/^\n+/, "");
}

/** Appends in a loop: spreading a long prompt into push() would overflow the call stack. */
function append(target: number[], items: readonly number[]): void {
  for (const item of items) target.push(item);
}

function turn(role: string, body: number[]): number[] {
  return [IM_START_TOKEN_ID, ...encode(`${role}\n`), ...body, EOS_TOKEN_ID, ...encode("\n")];
}

/** Prompt ids of a conversation, as vLLM would render it with this template. */
export function renderChatPrompt(
  messages: readonly ChatMessageParam[],
  options: RenderChatOptions = {},
): number[] {
  const tools = options.tools ?? [];
  const ids: number[] = [];
  let rest = messages;
  const first = messages[0];
  if (tools.length > 0) {
    // Qwen puts the tools into the first system turn, creating one when the chat has none.
    const hasSystem =
      first !== undefined && (first.role === "system" || first.role === "developer");
    const system = hasSystem ? contentText(first.content) : "";
    const body = system === "" ? [] : encode(`${system}\n\n`);
    append(ids, turn("system", [...body, ...encode(toolsBlockText(tools))]));
    if (hasSystem) rest = messages.slice(1);
  }
  for (const message of rest) {
    switch (message.role) {
      case "system":
      case "developer":
        append(ids, turn("system", encode(contentText(message.content))));
        break;
      case "user":
        append(ids, turn("user", encode(contentText(message.content))));
        break;
      case "assistant": {
        const text = contentText(message.content);
        const body = encode(options.stripThinkInHistory ? stripThink(text) : text);
        for (const call of message.tool_calls ?? []) append(body, historyToolCallIds(call));
        append(ids, turn("assistant", body));
        break;
      }
      case "tool":
        append(
          ids,
          turn("user", [
            ...encode("<tool_response>\n"),
            ...encode(contentText(message.content)),
            ...encode("\n</tool_response>"),
          ]),
        );
        break;
    }
  }
  if (options.addGenerationPrompt ?? true)
    append(ids, [IM_START_TOKEN_ID, ...encode("assistant\n")]);
  return ids;
}
