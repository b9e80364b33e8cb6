/**
 * @module Responses `input` items as chat messages, normalised so the same conversation gives
 * byte-identical messages on every call (the session recognises earlier turns, and stores calls as
 * deltas, by comparing them). What varies between a harness's calls and is dropped: item `id`s and
 * `status`, a one-part text list versus a plain string, how tool-call JSON is spaced.
 *
 * Consecutive assistant-side items (reasoning, assistant message, function_call, custom_tool_call,
 * local_shell_call) are one model turn, so they merge into one chat assistant message; a reasoning
 * item after other assistant content opens a new one, because every turn the gateway answers
 * starts with its reasoning item. A reasoning item the gateway minted (its `encrypted_content` is
 * a turn reference) puts the call id on that message as `x_gateway_call`.
 */
import type { JsonObject } from "../../../schemas/json";
import { readTurnRef } from "../turn-ref";
import type { ContentPart, InputItem, LocalShellAction, ReasoningItem } from "./request-schema";
import { LOCAL_SHELL_FUNCTION } from "./tools-to-chat";

/**
 * Parts joined with a newline, as vLLM joins a list of text parts when it renders chat content as
 * a string, so a list and its joined string prompt the model the same way. Images and files stand
 * as placeholders: the normalised chat body carries text only.
 */
export function contentText(content: string | readonly ContentPart[]): string {
  if (typeof content === "string") return content;
  return content.map(partText).join("\n");
}

function partText(part: ContentPart): string {
  switch (part.type) {
    case "input_text":
    case "output_text":
      return part.text;
    case "refusal":
      return part.refusal;
    case "input_image":
      return "[image]";
    case "input_file":
      return part.filename ? `[file: ${part.filename}]` : "[file]";
  }
}

/** JSON text re-serialised compactly when it parses, so `{"a": 1}` and `{"a":1}` agree; else as sent. */
export function normaliseArguments(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
}

/** The `local_shell` function's arguments for an action, as the model would have written them. */
export function localShellArguments(action: LocalShellAction): string {
  const args: JsonObject = { command: action.command };
  if (action.working_directory) args.workdir = action.working_directory;
  if (typeof action.timeout_ms === "number") args.timeout_ms = action.timeout_ms;
  return JSON.stringify(args);
}

/** The reasoning text of an item: its `reasoning_text` content when sent, else its summaries. */
function reasoningText(item: ReasoningItem): string {
  const content = item.content ?? [];
  const parts = content.length > 0 ? content : item.summary;
  return parts.map((part) => part.text).join("\n");
}

/** One assistant turn being gathered from consecutive items. */
interface Turn {
  texts: string[];
  reasoning: string[];
  toolCalls: JsonObject[];
  call: string | null;
  opened: boolean;
}

function emptyTurn(): Turn {
  return { texts: [], reasoning: [], toolCalls: [], call: null, opened: false };
}

function turnMessage(turn: Turn): JsonObject {
  const text = turn.texts.join("\n");
  const message: JsonObject = { role: "assistant", content: text === "" ? null : text };
  const reasoning = turn.reasoning.join("\n");
  if (reasoning !== "") message.reasoning_content = reasoning;
  if (turn.toolCalls.length > 0) message.tool_calls = turn.toolCalls;
  if (turn.call !== null) message.x_gateway_call = turn.call;
  return message;
}

function toolCall(id: string, name: string, args: string): JsonObject {
  return { id, type: "function", function: { name, arguments: args } };
}

/**
 * The chat messages for a request's `instructions` and `input`: instructions first as a system
 * message, developer and system messages as system messages in place, tool outputs as `tool`
 * messages keyed by `call_id`.
 * @example inputToMessages("hi", "be brief") // [{role:"system",content:"be brief"},{role:"user",content:"hi"}]
 */
export function inputToMessages(
  input: string | readonly InputItem[],
  instructions?: string | null,
): JsonObject[] {
  const messages: JsonObject[] = [];
  if (instructions) messages.push({ role: "system", content: instructions });
  if (typeof input === "string") {
    messages.push({ role: "user", content: input });
    return messages;
  }
  let turn = emptyTurn();
  const flush = () => {
    if (turn.opened) messages.push(turnMessage(turn));
    turn = emptyTurn();
  };
  for (const item of input) {
    switch (item.type) {
      case "reasoning": {
        if (turn.opened) flush();
        const text = reasoningText(item);
        if (text !== "") turn.reasoning.push(text);
        turn.call = item.encrypted_content ? readTurnRef(item.encrypted_content) : null;
        turn.opened = true;
        break;
      }
      case "message":
        if (item.role === "assistant") {
          const text = contentText(item.content);
          if (text !== "") turn.texts.push(text);
          turn.opened = true;
          break;
        }
        flush();
        messages.push({
          role: item.role === "user" ? "user" : "system",
          content: contentText(item.content),
        });
        break;
      case "function_call":
        turn.toolCalls.push(toolCall(item.call_id, item.name, normaliseArguments(item.arguments)));
        turn.opened = true;
        break;
      case "custom_tool_call":
        turn.toolCalls.push(
          toolCall(item.call_id, item.name, JSON.stringify({ input: item.input })),
        );
        turn.opened = true;
        break;
      case "local_shell_call":
        turn.toolCalls.push(
          toolCall(item.call_id, LOCAL_SHELL_FUNCTION, localShellArguments(item.action)),
        );
        turn.opened = true;
        break;
      case "function_call_output":
      case "custom_tool_call_output":
        flush();
        messages.push({
          role: "tool",
          tool_call_id: item.call_id,
          content: contentText(item.output),
        });
        break;
      case "local_shell_call_output":
        flush();
        messages.push({
          role: "tool",
          tool_call_id: (item.call_id ?? item.id)!,
          content: item.output,
        });
        break;
      case "item_reference":
        // Refused by the schema; listed so the switch is exhaustive.
        break;
    }
  }
  flush();
  return messages;
}
