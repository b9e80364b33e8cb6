/**
 * @module Turning a rollout's conversation into ATIF steps: each LLM call's prompt messages
 * (only what is new since the previous call) and its response, tool results attached to the
 * agent step whose tool call they answer.
 */
import { ChatMessage, type ToolCall, messageText } from "../../schemas/chat";
import type { JsonObject, JsonValue } from "../../schemas/json";
import type { LlmCall } from "../../schemas/llm-call";

/** `obj` without its undefined entries (so it is a JSON object). */
export function compact(obj: Record<string, JsonValue | undefined>): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(obj)) if (value !== undefined) out[key] = value;
  return out;
}

/** An epoch-milliseconds time as ISO 8601, or undefined when it is not a usable time. */
export function isoTime(ms: number | null | undefined): string | undefined {
  return typeof ms === "number" && Number.isFinite(ms) && ms > 0
    ? new Date(ms).toISOString()
    : undefined;
}

/**
 * Each stored message object's parse, or null when it is not a chat message. Decoded calls share
 * their prompt's leading message objects with the call before them (see call-codec), so a rollout's
 * k-th call re-parses only its new turns: without this, an ATIF document parsed every turn again
 * for every later call, quadratic in the turns. Keyed weakly by immutable records: nothing leaks.
 */
const parsedMessages = new WeakMap<object, ChatMessage | null>();

function parseMessage(raw: unknown): ChatMessage | null {
  if (typeof raw !== "object" || raw === null) return null;
  let parsed = parsedMessages.get(raw);
  if (parsed === undefined) {
    if (isPlainTextMessage(raw)) parsed = raw;
    else {
      const result = ChatMessage.safeParse(raw);
      parsed = result.success ? result.data : null;
    }
    parsedMessages.set(raw, parsed);
  }
  return parsed;
}

const ROLES: ReadonlySet<unknown> = new Set(ChatMessage.shape.role.options);
const optionalString = (value: unknown) => value === undefined || typeof value === "string";

/**
 * A message ChatMessage accepts as it is: a known role, text or no content, no tool calls. Most
 * turns are; they skip zod (interpreted in workerd, a measured part of publication), the rest
 * (tool calls, content parts) are parsed.
 */
function isPlainTextMessage(raw: object): raw is ChatMessage {
  const message = raw as Record<string, unknown>;
  return (
    ROLES.has(message.role) &&
    (message.content === null || optionalString(message.content)) &&
    message.tool_calls === undefined &&
    optionalString(message.name) &&
    optionalString(message.tool_call_id) &&
    (message.reasoning_content === null || optionalString(message.reasoning_content))
  );
}

/** The chat messages a call sent ([] for a text completion or an unreadable request). */
export function requestMessages(call: LlmCall): ChatMessage[] {
  const raw = call.request.messages;
  if (!Array.isArray(raw)) return [];
  const messages: ChatMessage[] = [];
  for (const message of raw) {
    const parsed = parseMessage(message);
    if (parsed === null) return [];
    messages.push(parsed);
  }
  return messages;
}

/**
 * Whether two messages are the same turn. Compared by role, text, tool-call ids and the answered
 * tool call, not deep equality: an external client may re-send a message with extra null fields.
 */
function sameMessage(a: ChatMessage, b: ChatMessage): boolean {
  const ids = (m: ChatMessage) => (m.tool_calls ?? []).map((call) => call.id).join("\u0000");
  return (
    a.role === b.role &&
    messageText(a) === messageText(b) &&
    ids(a) === ids(b) &&
    (a.tool_call_id ?? "") === (b.tool_call_id ?? "")
  );
}

const THINK_BLOCK = /^\s*<think>([\s\S]*?)<\/think>\n*/;

/**
 * The visible answer and the reasoning of an assistant message. vLLM without a reasoning parser
 * leaves Qwen-style `<think>…</think>` in `content`; ATIF keeps reasoning in `reasoning_content`.
 * The token ids in the step's metrics stay the engine's own, whatever the text split.
 */
function splitReasoning(message: ChatMessage): { text: string; reasoning: string | undefined } {
  const text = messageText(message);
  if (message.reasoning_content) return { text, reasoning: message.reasoning_content };
  const match = THINK_BLOCK.exec(text);
  return match
    ? { text: text.slice(match[0].length), reasoning: match[1] }
    : { text, reasoning: undefined };
}

/** An OpenAI tool call as an ATIF tool call; arguments that are not a JSON object are kept raw in `extra`. */
function atifToolCall(call: ToolCall, fallbackId: string): JsonObject {
  let parsed: unknown;
  try {
    parsed = JSON.parse(call.function.arguments);
  } catch {
    parsed = undefined;
  }
  const isObject = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed);
  return compact({
    tool_call_id: call.id || fallbackId,
    function_name: call.function.name || "unknown",
    arguments: isObject ? (parsed as JsonObject) : {},
    extra: isObject ? undefined : { raw_arguments: call.function.arguments },
  });
}

/** The agent-step fields a recorded call adds: model, time, metrics with token ids. */
export interface AgentCallFields {
  timestamp?: string;
  model_name?: string;
  metrics?: JsonObject;
  llm_call_count?: number;
  extra?: JsonObject;
}

/**
 * Accumulates ATIF steps. Feed it the calls in order (`addCall`), then optionally the final
 * conversation (`addPrompt`); read `steps`. Messages already seen are not repeated; when a prompt
 * rewrites history (an agent that trims or summarizes), the re-sent turns are emitted again with
 * `is_copied_context: true`, as ATIF asks for context copied into the trajectory.
 */
export class AtifStepWriter {
  readonly steps: JsonObject[] = [];
  #history: ChatMessage[] = [];
  /** tool_call_id → the agent step that made the call (its observation receives the result). */
  #toolOwners = new Map<string, JsonObject>();

  /** Emits the turns of `messages` not already in the conversation. */
  addPrompt(messages: readonly ChatMessage[]): void {
    let shared = 0;
    while (
      shared < messages.length &&
      shared < this.#history.length &&
      sameMessage(messages[shared]!, this.#history[shared]!)
    )
      shared++;
    for (let i = shared; i < messages.length; i++)
      this.#addMessage(messages[i]!, i < this.#history.length, {});
    this.#history = [...messages];
  }

  /** Emits a call: the new turns of its prompt, then its response as an agent step with `fields`. */
  addCall(call: LlmCall, fields: AgentCallFields): void {
    this.addPrompt(requestMessages(call));
    this.#addMessage(call.response_message, false, fields);
    this.#history.push(call.response_message);
  }

  #push(step: Record<string, JsonValue | undefined>): JsonObject {
    const full = compact({ step_id: this.steps.length + 1, ...step });
    this.steps.push(full);
    return full;
  }

  #addMessage(message: ChatMessage, copied: boolean, fields: AgentCallFields): void {
    const copy = copied ? true : undefined;
    switch (message.role) {
      case "system":
      case "developer":
        this.#push({ source: "system", message: messageText(message), is_copied_context: copy });
        return;
      case "user":
        this.#push({ source: "user", message: messageText(message), is_copied_context: copy });
        return;
      case "tool":
        this.#addToolResult(message, copy);
        return;
      case "assistant":
        this.#addAgent(message, copy, fields);
        return;
    }
  }

  #addAgent(message: ChatMessage, copy: true | undefined, fields: AgentCallFields): void {
    const { text, reasoning } = splitReasoning(message);
    const stepNumber = this.steps.length + 1;
    const toolCalls = (message.tool_calls ?? []).map((call, index) =>
      atifToolCall(call, `step-${stepNumber}-call-${index}`),
    );
    const step = this.#push({
      timestamp: fields.timestamp,
      source: "agent",
      model_name: fields.model_name,
      message: text,
      reasoning_content: reasoning,
      tool_calls: toolCalls.length > 0 ? toolCalls : undefined,
      metrics: fields.metrics,
      llm_call_count: fields.llm_call_count,
      is_copied_context: copy,
      extra: fields.extra,
    });
    for (const call of toolCalls) this.#toolOwners.set(call.tool_call_id as string, step);
  }

  /**
   * A tool result joins the observation of the agent step that made the call. One whose call is
   * unknown (an external agent that sent a result without its call) becomes a system step whose
   * result has no `source_call_id`, so the document stays valid.
   */
  #addToolResult(message: ChatMessage, copy: true | undefined): void {
    const id = message.tool_call_id ?? "";
    const owner = this.#toolOwners.get(id);
    if (owner) {
      const observation = (owner.observation ??= { results: [] }) as { results: JsonObject[] };
      observation.results.push({ source_call_id: id, content: messageText(message) });
      return;
    }
    this.#push({
      source: "system",
      message: "tool result without a recorded tool call",
      observation: {
        results: [
          compact({ content: messageText(message), extra: id ? { tool_call_id: id } : undefined }),
        ],
      },
      is_copied_context: copy,
    });
  }
}
