/**
 * @module One harness turn sent token-exactly: when the request continues the previous call (its
 * answer came back, recognised by turn-match.ts), the prompt is the previous prompt and sampled ids
 * plus the rendered new part (prompt-ids.ts), sent upstream as a text completion from ids (the
 * builder partial rollouts resume with, `continuationBody`), and the answer is parsed back into a
 * chat turn (completion-turn.ts). Otherwise the chat request goes upstream as it is.
 */
import type { ChatMessage } from "../../schemas/chat";
import type { JsonObject } from "../../schemas/json";
import type { LlmCall } from "../../schemas/llm-call";
import type { CapturedOutput } from "../capture/captured-output";
import { captureChatCompletion } from "../capture/chat-capture";
import { captureCompletion } from "../capture/completion-capture";
import { continuationBody } from "../interruptible";
import type { BackendCallOptions, ModelBackend, UpstreamPath } from "../model-backend";
import { parseCompletionTurn } from "./completion-turn";
import { continuedPrompt } from "./prompt-ids";
import { matchTurn, type TurnMatch } from "./turn-match";

/** How the record says the call's prompt was made. */
export type ContinuationNote = NonNullable<LlmCall["continuation"]>;

/** A harness call, planned: what goes upstream, how its reply is captured, and what the record says. */
export interface PlannedTurn {
  path: UpstreamPath;
  body: JsonObject;
  capture(raw: unknown): CapturedOutput;
  note: ContinuationNote;
}

/** The request's messages matched against the previous call (null: none), earlier turns the gateway's own. */
export function matchRequest(previous: LlmCall | null, body: JsonObject): TurnMatch {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as ChatMessage[];
  const before = previous && Array.isArray(previous.request.messages) ? previous : null;
  return matchTurn(
    before && {
      call_id: before.call_id,
      messages: before.request.messages as ChatMessage[],
      response_message: before.response_message,
    },
    messages,
  );
}

/**
 * Messages as the template reads them: an answer's reasoning in `reasoning_content`, where chat
 * templates (Qwen3's) look for it, also when the server returned it as `reasoning` (vLLM's newer
 * field). So the renderings see the reasoning the model produced, and a template that drops earlier
 * reasoning once a new query follows shows as drift.
 */
function forTemplate(messages: JsonObject[]): JsonObject[] {
  return messages.map((message) =>
    message.role === "assistant" &&
    message.reasoning_content === undefined &&
    typeof message.reasoning === "string"
      ? { ...message, reasoning_content: message.reasoning }
      : message,
  );
}

/** Ids for the i-th tool call of call `callId`: stable, so a retried record names the same calls. */
function toolCallIdOf(callId: string): (index: number) => string {
  const tail = callId.slice(callId.lastIndexOf("/") + 1).replace(/-/g, "");
  return (index) => `call_${tail.slice(0, 24)}_${index}`;
}

/**
 * Plans the upstream request of a harness call whose chat body `shaped` (already shaped, its
 * messages those of `match`) continues `previous` or not.
 */
export async function planTurn(
  shaped: JsonObject,
  match: TurnMatch,
  previous: LlmCall | null,
  backend: ModelBackend,
  routing: BackendCallOptions,
  callId: string,
): Promise<PlannedTurn> {
  const whole = (reason: string): PlannedTurn => ({
    path: "/chat/completions",
    body: shaped,
    capture: captureChatCompletion,
    note: { token_exact: false, reason },
  });
  if (match.kind === "fresh") return whole(match.reason);
  if (!previous || !backend.renderChat || !backend.returnsTokenIds)
    return whole("the backend cannot render prompts to token ids");
  const history: JsonObject = {
    ...shaped,
    messages: forTemplate([
      ...(previous.request.messages as JsonObject[]),
      previous.response_message as JsonObject,
    ]),
  };
  const full: JsonObject = { ...shaped, messages: forTemplate(shaped.messages as JsonObject[]) };
  const [historyIds, fullIds] = await Promise.all([
    backend.renderChat(history, false, routing),
    backend.renderChat(full, true, routing),
  ]);
  if (!historyIds || !fullIds) return whole("the backend's /tokenize did not render the chat");
  const prompt = continuedPrompt(previous, { history: historyIds, full: fullIds });
  if ("drift" in prompt) return whole(prompt.drift);
  const body: JsonObject = { ...continuationBody(shaped, prompt.ids, []), stream: false };
  // The chat body's salt (its policy version's cache partition) goes with it.
  if (shaped.cache_salt !== undefined) body.cache_salt = shaped.cache_salt;
  const idOf = toolCallIdOf(callId);
  return {
    path: "/completions",
    body,
    capture(raw) {
      const captured = captureCompletion(raw);
      const text =
        typeof captured.response_message.content === "string"
          ? captured.response_message.content
          : "";
      const turn = parseCompletionTurn(text, captured.finish_reason, idOf);
      return { ...captured, response_message: turn.message, finish_reason: turn.finish_reason };
    },
    note: { token_exact: true, via: match.via },
  };
}
