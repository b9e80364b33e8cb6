/**
 * @module The streaming answer of `/v1/chat/completions`: after the time to first token a role
 * chunk per choice, then per position one chunk per choice still generating, paced `perTokenMs`
 * apart. Chunks carry only the fields vLLM sets (it serialises them with exclude_unset): reasoning
 * deltas in the field(s) `compat.reasoningField` names, hermes or forced tool-call deltas, content.
 */
import type { ChatChoice, ToolParsing } from "./chat-choices";
import { type ChatGeneration, promptTextField } from "./chat-answer";
import type { RequestScope, SimulatorContext } from "./context";
import { ForcedToolStreamParser } from "./forced-tools";
import { HermesStreamParser } from "./hermes-stream";
import { type SseWriter, pause, startSse } from "./http-io";
import { chatLogprobEntries } from "./logprobs";
import type { SimulatorConfig } from "./options";
import {
  type ReasoningMode,
  reasoningFields,
  reasoningModeOf,
  splitReasoningSoFar,
} from "./reasoning-split";
import { requestMetrics } from "./request-metrics";
import type { SimTokenizer } from "./sim-tokenizer";
import { tokenizerFor } from "./tokenizer-registry";

/** One choice's stream state: the text so far and what of it has been sent. */
class ChoiceStream {
  readonly choice: ChatChoice;
  #text = "";
  #sentReasoning = "";
  #sentContent = 0;
  readonly #hermes: HermesStreamParser | undefined;
  readonly #forced: ForcedToolStreamParser | undefined;
  readonly #config: SimulatorConfig;
  readonly #includeReasoning: boolean;
  readonly #tokenizer: SimTokenizer;
  readonly #mode: ReasoningMode;

  constructor(
    choice: ChatChoice,
    parsing: ToolParsing,
    config: SimulatorConfig,
    includeReasoning: boolean,
    mode: ReasoningMode,
  ) {
    this.choice = choice;
    this.#config = config;
    this.#includeReasoning = includeReasoning;
    this.#tokenizer = tokenizerFor(config.tokenizer);
    this.#mode = mode;
    if (parsing === "hermes") this.#hermes = new HermesStreamParser();
    else if (parsing !== "none") this.#forced = new ForcedToolStreamParser(parsing, choice.index);
  }

  /** Whether a tool call has been streamed. */
  get calledTools(): boolean {
    return this.#hermes?.calledTools ?? false;
  }

  /** Reasoning tokens streamed so far. */
  get reasoningTokens(): number {
    return this.#sentReasoning === ""
      ? 0
      : this.#tokenizer.encode(`<think>${this.#sentReasoning}</think>`).length;
  }

  /** The delta that token `position` adds; empty when nothing can be sent yet. */
  step(position: number): Record<string, unknown> {
    const textDelta = this.choice.generation.streamDeltas[position] ?? "";
    this.#text += textDelta;
    if (this.#mode === null && !this.#hermes && !this.#forced) return { content: textDelta };
    const split =
      this.#mode !== null
        ? splitReasoningSoFar(this.#text, this.#mode)
        : { reasoning: "", content: this.#text };
    const delta: Record<string, unknown> = {};
    const reasoning = split.reasoning.slice(this.#sentReasoning.length);
    this.#sentReasoning = split.reasoning;
    if (reasoning !== "" && this.#includeReasoning)
      Object.assign(delta, reasoningFields(reasoning, this.#config.compat));
    if (this.#hermes) {
      const parsed = this.#hermes.update(split.content);
      if (parsed?.content) delta.content = parsed.content;
      if (parsed && parsed.tool_calls.length > 0) delta.tool_calls = parsed.tool_calls;
    } else if (this.#forced) {
      const calls = this.#forced.update(split.content);
      if (calls.length > 0) delta.tool_calls = calls;
    } else if (split.content.length > this.#sentContent) {
      delta.content = split.content.slice(this.#sentContent);
      this.#sentContent = split.content.length;
    }
    return delta;
  }
}

function finishReason(stream: ChoiceStream, parsing: ToolParsing): string {
  const finish = stream.choice.generation.finishReason;
  if (finish !== "stop") return finish;
  if (parsing === "required" || (parsing === "hermes" && stream.calledTools)) return "tool_calls";
  return finish;
}

/**
 * Streams `chat` as SSE chunks ending with `data: [DONE]`. Answers null when the stream ended, or
 * the positions generated before the client left (or a malformed fault broke the stream).
 */
export async function streamChatCompletion(
  chat: ChatGeneration,
  scope: RequestScope,
  context: SimulatorContext,
): Promise<number | null> {
  const { request, promptIds } = chat;
  const { config } = scope;
  const head = {
    id: chat.id,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: config.model,
  };
  const sse = startSse(scope.res);
  const includeUsage = Boolean(request.stream_options?.include_usage);
  const continuousUsage = includeUsage && Boolean(request.stream_options?.continuous_usage_stats);
  const usage = (completion: number) => ({
    prompt_tokens: promptIds.length,
    total_tokens: promptIds.length + completion,
    completion_tokens: completion,
  });

  if (!(await pause(config.latency.ttftMs, scope.signal))) return aborted(sse, 0);
  chat.choices.forEach((choice, i) => {
    sse.send({
      ...head,
      choices: [
        {
          index: choice.index,
          delta: { role: "assistant", content: "" },
          logprobs: null,
          finish_reason: null,
        },
      ],
      prompt_token_ids: request.return_token_ids ? promptIds : null,
      ...(i === 0 ? promptTextField(chat, scope) : {}),
      ...(continuousUsage ? { usage: usage(0) } : {}),
    });
  });
  if (scope.malformed) {
    context.stats.fault("malformed");
    sse.sendRaw(
      `{"id":"${head.id}","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":`,
    );
    return aborted(sse, 0);
  }

  const mode = reasoningModeOf(config, request.chat_template_kwargs);
  const streams = chat.choices.map(
    (choice) =>
      new ChoiceStream(choice, chat.parsing, config, request.include_reasoning !== false, mode),
  );
  const tokenizer = tokenizerFor(config.tokenizer);
  const longest = Math.max(...chat.choices.map((choice) => choice.generation.tokenIds.length));
  for (let position = 0; position < longest; position++) {
    if (!(await pause(config.latency.perTokenMs, scope.signal))) return aborted(sse, position);
    for (const stream of streams) {
      const ids = stream.choice.generation.tokenIds;
      if (position >= ids.length) continue;
      const last = position === ids.length - 1;
      const delta = stream.step(position);
      if (
        Object.keys(delta).length === 0 &&
        !last &&
        !request.logprobs &&
        !request.return_token_ids
      )
        continue;
      const choice: Record<string, unknown> = {
        index: stream.choice.index,
        delta,
        logprobs: request.logprobs
          ? {
              content: chatLogprobEntries(
                tokenizer,
                stream.choice.seed,
                [ids[position] as number],
                request.top_logprobs ?? 0,
                position,
              ),
            }
          : null,
        finish_reason: last ? finishReason(stream, chat.parsing) : null,
        token_ids: request.return_token_ids ? [ids[position]] : null,
      };
      if (last) choice.stop_reason = stream.choice.generation.stopReason;
      if (
        !sse.send({
          ...head,
          choices: [choice],
          ...(continuousUsage ? { usage: usage(position + 1) } : {}),
        })
      )
        return position;
    }
  }
  const total = chat.choices.reduce((sum, choice) => sum + choice.generation.tokenIds.length, 0);
  const metrics = requestMetrics(config, request, chat.choices);
  if (includeUsage) {
    const final: Record<string, unknown> = usage(total);
    if (config.reasoningParser)
      final.completion_tokens_details = {
        reasoning_tokens: streams.reduce((sum, s) => sum + s.reasoningTokens, 0),
      };
    sse.send({ ...head, choices: [], usage: final, ...(metrics ? { metrics } : {}) });
  } else if (metrics) {
    sse.send({ ...head, choices: [], metrics });
  }
  sse.done();
  return null;
}

function aborted(sse: SseWriter, positions: number): number {
  sse.abort();
  return positions;
}
