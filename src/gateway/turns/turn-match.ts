/**
 * @module Whether a harness's request continues the rollout's previous call. A harness (Claude
 * Code, Codex, opencode) re-sends the whole conversation on every call, including the model's own
 * earlier turns as *it* serialised them: Claude Code re-sends tool inputs as objects, opencode
 * re-serialises the arguments' JSON, Codex re-sends reasoning as an opaque item. Training on a
 * re-rendering of those copies would not be the tokens the model sampled. So the gateway
 * recognises its own turn (by what it put in it: the call id in a `thinking` signature or a
 * Responses `encrypted_content`, the tool-call ids it answered with, or equal content after
 * normalising JSON) and puts its record of that turn back in place of the copy.
 */
import type { ChatMessage } from "../../schemas/chat";
import type { JsonObject } from "../../schemas/json";

/** The extra field the API translators put on an assistant turn the gateway minted (turn-ref.ts). */
export const TURN_REF_FIELD = "x_gateway_call";

/** What the gateway recorded of the call a harness request may continue. */
export interface PreviousTurn {
  call_id: string;
  /** The request messages as recorded (already normalised, earlier turns already the gateway's own). */
  messages: readonly ChatMessage[];
  /** The assistant turn the gateway answered with. */
  response_message: ChatMessage;
}

/** How a request relates to the previous call. */
export type TurnMatch =
  | {
      kind: "continues";
      /** The request's messages with the gateway's own turns in place of the harness's copies. */
      messages: ChatMessage[];
      /** The messages after the previous call's answer. */
      tail: ChatMessage[];
      /** What identified the previous answer. */
      via: "call_ref" | "tool_call_ids" | "content";
    }
  | { kind: "fresh"; reason: string; messages: ChatMessage[] };

function textOf(content: ChatMessage["content"]): string | null {
  if (content === undefined || content === null) return null;
  if (typeof content === "string") return content;
  return content.map((part) => part.text).join("");
}

function canonicalArguments(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw));
  } catch {
    return raw;
  }
}

/**
 * One message in the form every call of a conversation agrees on: text parts joined into a string,
 * tool-call arguments as canonical JSON, no turn reference. Unknown fields are kept.
 */
export function normalizeMessage(message: ChatMessage): ChatMessage {
  const { [TURN_REF_FIELD]: _ref, ...rest } = message as ChatMessage & Record<string, unknown>;
  const out: ChatMessage = { ...rest, role: message.role };
  if (Array.isArray(message.content)) out.content = textOf(message.content);
  if (message.tool_calls)
    out.tool_calls = message.tool_calls.map((call) => ({
      id: call.id,
      type: "function",
      function: {
        name: call.function.name,
        arguments: canonicalArguments(call.function.arguments),
      },
    }));
  return out;
}

/** A comparable key of a message (assistant turns by content, reasoning and canonical tool calls). */
function keyOf(message: ChatMessage): string {
  const normal = normalizeMessage(message);
  if (normal.role !== "assistant") return JSON.stringify(normal);
  return JSON.stringify([
    textOf(normal.content ?? null) ?? "",
    normal.reasoning_content ?? (normal as JsonObject).reasoning ?? "",
    (normal.tool_calls ?? []).map((call) => [call.function.name, call.function.arguments]),
  ]);
}

function toolCallIds(message: ChatMessage): string {
  return (message.tool_calls ?? []).map((call) => call.id).join("\u0000");
}

/** Whether `copy` (the harness's) is `recorded` (the gateway's answer of call `callId`), and how that shows. */
export function sameTurn(
  recorded: ChatMessage,
  copy: ChatMessage,
  callId?: string,
): "call_ref" | "tool_call_ids" | "content" | null {
  if (recorded.role !== "assistant" || copy.role !== "assistant") return null;
  const ref = (copy as Record<string, unknown>)[TURN_REF_FIELD];
  if (callId !== undefined && ref === callId) return "call_ref";
  const ids = toolCallIds(recorded);
  if (ids !== "" && ids === toolCallIds(copy)) return "tool_call_ids";
  return keyOf(recorded) === keyOf(copy) ? "content" : null;
}

/** Whether an earlier message of the request is the recorded one (the gateway's turns by id or content). */
function sameMessage(recorded: ChatMessage, copy: ChatMessage): boolean {
  if (recorded.role === "assistant") return sameTurn(recorded, copy) !== null;
  return keyOf(recorded) === keyOf(copy);
}

/**
 * Matches `messages` (a harness request, translated to chat) against the previous call: it
 * continues it when it starts with the previous request's messages and then the previous answer.
 */
export function matchTurn(
  previous: PreviousTurn | null,
  messages: readonly ChatMessage[],
): TurnMatch {
  const normal = messages.map(normalizeMessage);
  if (!previous) return { kind: "fresh", reason: "first call", messages: normal };
  const before = previous.messages;
  if (messages.length <= before.length)
    return { kind: "fresh", reason: "shorter than the previous call", messages: normal };
  for (let i = 0; i < before.length; i++)
    if (!sameMessage(before[i]!, messages[i]!))
      return {
        kind: "fresh",
        reason: `message ${i} differs from the previous call's`,
        messages: normal,
      };
  const via = sameTurn(previous.response_message, messages[before.length]!, previous.call_id);
  if (via === null)
    return {
      kind: "fresh",
      reason: `message ${before.length} is not the previous answer`,
      messages: normal,
    };
  const tail = normal.slice(before.length + 1);
  return {
    kind: "continues",
    messages: [...before, previous.response_message, ...tail],
    tail,
    via,
  };
}
