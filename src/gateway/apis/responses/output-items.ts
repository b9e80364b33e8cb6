/**
 * @module A chat completion's assistant message as Responses output items, in the order the
 * Responses API gives them (https://platform.openai.com/docs/api-reference/responses/object):
 * one `reasoning` item, one `message` item when there is text, then one item per tool call. The
 * reasoning item is always there, even with no reasoning text: its `encrypted_content` is the turn
 * reference (`mintTurnRef(callId)`) that a harness sends back verbatim (Codex asks for it with
 * `include: ["reasoning.encrypted_content"]`), which lets the gateway find the turn it sampled.
 */
import type { JsonObject } from "../../../schemas/json";
import { mintTurnRef } from "../turn-ref";
import type { ChatReply } from "../chat-reply";
import { LOCAL_SHELL_FUNCTION, type ToolKinds } from "./tools-to-chat";

/** One output item, as a JSON object whose `type` says which. */
export type OutputItem = JsonObject & {
  type: "reasoning" | "message" | "function_call" | "custom_tool_call" | "local_shell_call";
  id: string;
};

/** Item status: the last items of a cut-short answer are `incomplete`, as the API marks them. */
type ItemStatus = "completed" | "incomplete";

/**
 * A short stable id stem for a call (two FNV-1a hashes, 16 hex digits): the JSON answer and the
 * event stream of one call name its items alike, and ids stay short whatever the call id holds.
 */
export function idStem(callId: string): string {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < callId.length; i++) {
    const code = callId.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193) >>> 0;
    b = Math.imul(b ^ code, 0x01000193 + 2 * i + 1) >>> 0;
  }
  return a.toString(16).padStart(8, "0") + b.toString(16).padStart(8, "0");
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** The local_shell action for the function's arguments, or null when they are not one. */
function localShellAction(args: Record<string, unknown>): JsonObject | null {
  const { command, workdir, timeout_ms } = args;
  if (!Array.isArray(command) || !command.every((part) => typeof part === "string")) return null;
  const action: JsonObject = { type: "exec", command: command as string[], env: {} };
  if (typeof timeout_ms === "number") action.timeout_ms = timeout_ms;
  if (typeof workdir === "string") action.working_directory = workdir;
  return action;
}

/**
 * A tool call as the item its tool's kind asks for. Arguments that do not fit (not JSON, no string
 * `input` for a custom tool, no argv for local_shell) come back as a plain `function_call` with
 * the raw string: the harness answers it as a failed call and the model sees why.
 */
function toolCallItem(
  call: { id: string; function: { name: string; arguments: string } },
  id: string,
  kinds: ToolKinds,
  status: ItemStatus,
): OutputItem {
  const name = call.function.name;
  const raw = call.function.arguments;
  if (kinds.custom.has(name)) {
    const input = parseObject(raw)?.input;
    if (typeof input === "string")
      return { id: `ctc_${id}`, type: "custom_tool_call", status, call_id: call.id, name, input };
  }
  if (kinds.localShell && name === LOCAL_SHELL_FUNCTION) {
    const args = parseObject(raw);
    const action = args && localShellAction(args);
    if (action)
      return { id: `lsh_${id}`, type: "local_shell_call", status, call_id: call.id, action };
  }
  return { id: `fc_${id}`, type: "function_call", status, call_id: call.id, name, arguments: raw };
}

/** The output items for a (checked) chat reply's first choice. */
export function replyOutputItems(
  reply: ChatReply,
  options: { callId: string; kinds: ToolKinds; incomplete: boolean },
): OutputItem[] {
  const message = reply.choices[0]!.message;
  const stem = idStem(options.callId);
  const status: ItemStatus = options.incomplete ? "incomplete" : "completed";
  const reasoning = message.reasoning_content ?? message.reasoning ?? "";
  const items: OutputItem[] = [
    {
      id: `rs_${stem}`,
      type: "reasoning",
      summary: reasoning === "" ? [] : [{ type: "summary_text", text: reasoning }],
      encrypted_content: mintTurnRef(options.callId),
    },
  ];
  const text = message.content ?? "";
  if (text !== "")
    items.push({
      id: `msg_${stem}`,
      type: "message",
      status,
      role: "assistant",
      content: [{ type: "output_text", text, annotations: [] }],
    });
  (message.tool_calls ?? []).forEach((call, i) =>
    items.push(toolCallItem(call, `${stem}_${i}`, options.kinds, status)),
  );
  return items;
}
