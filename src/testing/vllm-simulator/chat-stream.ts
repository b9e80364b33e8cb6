/**
 * @module The streaming answer of `/v1/chat/completions`: a role chunk after the time to first
 * token, then one chunk per generated token, paced `perTokenMs` apart. Chunks carry only the
 * fields vLLM sets (it serialises them with exclude_unset).
 */
import type { ChatGeneration } from "./chat-completions";
import type { RequestScope, SimulatorContext } from "./context";
import { HermesStreamParser } from "./hermes-stream";
import { pause, startSse } from "./http-io";
import { chatLogprobEntries } from "./logprobs";
import { responseId } from "./request-checks";

/** Streams `chat` as SSE chunks ending with `data: [DONE]`. */
export async function streamChatCompletion(chat: ChatGeneration, scope: RequestScope, context: SimulatorContext): Promise<void> {
  const { request, generation, promptIds } = chat;
  const { latency, model } = scope.config;
  const head = { id: responseId("chatcmpl"), object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model };
  const sse = startSse(scope.res);
  const includeUsage = Boolean(request.stream_options?.include_usage);
  const continuousUsage = includeUsage && Boolean(request.stream_options?.continuous_usage_stats);
  const usage = (completion: number) => ({ prompt_tokens: promptIds.length, total_tokens: promptIds.length + completion, completion_tokens: completion });

  if (!(await pause(latency.ttftMs, scope.signal))) return sse.abort();
  sse.send({
    ...head,
    choices: [{ index: 0, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }],
    prompt_token_ids: request.return_token_ids ? promptIds : null,
    ...(continuousUsage ? { usage: usage(0) } : {}),
  });
  if (scope.malformed) {
    context.stats.fault("malformed");
    sse.sendRaw(`{"id":"${head.id}","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":`);
    return sse.abort();
  }

  const parser = chat.parseTools ? new HermesStreamParser() : undefined;
  const ids = generation.tokenIds;
  let text = "";
  for (let i = 0; i < ids.length; i++) {
    if (!(await pause(latency.perTokenMs, scope.signal))) return sse.abort();
    const last = i === ids.length - 1;
    text += generation.textDeltas[i] ?? "";
    let delta: Record<string, unknown>;
    if (parser) {
      const parsed = parser.update(text);
      if (!parsed && !last && !request.logprobs && !request.return_token_ids) continue;
      delta = parsed ? { content: parsed.content, tool_calls: parsed.tool_calls } : {};
    } else {
      delta = { content: generation.textDeltas[i] ?? "" };
    }
    const choice: Record<string, unknown> = {
      index: 0,
      delta,
      logprobs: request.logprobs ? { content: chatLogprobEntries(chat.seed, [ids[i] as number], request.top_logprobs ?? 0, i) } : null,
      finish_reason: null,
      token_ids: request.return_token_ids ? [ids[i]] : null,
    };
    if (last) {
      const toolCalls = parser?.calledTools && !chat.namedToolChoice && generation.finishReason === "stop";
      choice.finish_reason = toolCalls ? "tool_calls" : generation.finishReason;
      choice.stop_reason = generation.stopReason;
    }
    if (!sse.send({ ...head, choices: [choice], ...(continuousUsage ? { usage: usage(i + 1) } : {}) })) return;
  }
  if (includeUsage) sse.send({ ...head, choices: [], usage: usage(ids.length) });
  sse.done();
}
