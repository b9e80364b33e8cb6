/**
 * @module A chat completion's stream, generated from one whole reply: what a streaming chat client
 * (opencode's `@ai-sdk/openai-compatible`) reads when its turn ran token-exactly, in the chunk
 * shape of OpenAI's chat streaming reference and vLLM's server (role first, reasoning in
 * `reasoning_content`, then content, one delta per tool call, the finish chunk, usage when asked
 * with `stream_options.include_usage`, then `[DONE]`).
 */
import type { JsonObject } from "../../../schemas/json";
import { pendingReplyStream, sseEvent } from "../sse";

/** A chat stream's error chunk (vLLM sends `data: {"error": …}`) for a reply that failed. */
function errorChunk(error: unknown): Uint8Array {
  const status = (error as { status?: unknown }).status;
  const message = error instanceof Error ? error.message : String(error);
  return sseEvent(null, {
    error: {
      message,
      type: typeof status === "number" && status < 500 ? "invalid_request_error" : "server_error",
      code: typeof status === "number" ? status : 500,
    },
  });
}

function chunksOf(reply: JsonObject, includeUsage: boolean): Uint8Array[] {
  const choice = ((reply.choices as JsonObject[] | undefined) ?? [])[0] ?? {};
  const message = (choice.message as JsonObject | undefined) ?? {};
  const head = {
    id: reply.id,
    object: "chat.completion.chunk",
    created: reply.created,
    model: reply.model,
  };
  const chunk = (delta: JsonObject, finish: unknown = null): Uint8Array =>
    sseEvent(null, {
      ...head,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    });
  const out = [chunk({ role: "assistant", content: "" })];
  const reasoning = message.reasoning_content ?? message.reasoning;
  if (typeof reasoning === "string" && reasoning !== "")
    out.push(chunk({ reasoning_content: reasoning }));
  if (typeof message.content === "string" && message.content !== "")
    out.push(chunk({ content: message.content }));
  const calls = (message.tool_calls as JsonObject[] | undefined) ?? [];
  calls.forEach((call, index) => out.push(chunk({ tool_calls: [{ index, ...call }] })));
  out.push(chunk({}, choice.finish_reason ?? "stop"));
  if (includeUsage) out.push(sseEvent(null, { ...head, choices: [], usage: reply.usage ?? null }));
  out.push(sseEvent(null, "[DONE]"));
  return out;
}

/** The chat SSE stream of `reply`, with keepalive comments while it is pending. */
export function chatEventStream(
  reply: Promise<JsonObject>,
  options: { includeUsage: boolean; keepaliveMs?: number },
): ReadableStream<Uint8Array> {
  return pendingReplyStream(reply, options.keepaliveMs ?? 5000, [], (outcome) =>
    outcome.ok
      ? chunksOf(outcome.value, options.includeUsage)
      : [errorChunk(outcome.error), sseEvent(null, "[DONE]")],
  );
}
