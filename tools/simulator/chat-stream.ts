/**
 * @module The streaming answer of `/v1/chat/completions`: with each choice's first token its role
 * chunk, then one chunk per token as the engine's step produces it. Chunks carry only the fields vLLM sets (it serialises them with exclude_unset): reasoning
 * deltas in the field(s) `compat.reasoningField` names, hermes or forced tool-call deltas, content.
 */
import type { ChatChoice, ToolParsing } from "./chat-choices";
import { type ChatGeneration, promptTextField } from "./chat-answer";
import type { RequestScope, SimulatorContext } from "./context";
import { ForcedToolStreamParser } from "./forced-tools";
import { HermesStreamParser } from "./hermes-stream";
import { startSse } from "./http-io";
import type { EngineRequest } from "./engine/engine-loop";
import type { TokenEvent } from "./engine/sequence";
import { type StreamAnswer, endStreamEarly } from "./served-scope";
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

  /** Whether its role chunk went out (with its first token, as vLLM sends it). */
  started = false;

  /** The delta that token `event` adds; empty when nothing can be sent yet. */
  step(event: TokenEvent): Record<string, unknown> {
    const textDelta = event.streamDelta;
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

function finishReason(stream: ChoiceStream, parsing: ToolParsing, finish: string): string {
  if (finish !== "stop") return finish;
  if (parsing === "required" || (parsing === "hermes" && stream.calledTools)) return "tool_calls";
  return finish;
}

/**
 * The streamed answer of `chat`: SSE chunks as the engine produces tokens, ending with the usage
 * chunk (when asked) and `data: [DONE]`; an engine failure sends vLLM's error event before it.
 */
export function streamChatCompletion(
  chat: ChatGeneration,
  scope: RequestScope,
  context: SimulatorContext,
  served: readonly EngineRequest[],
): StreamAnswer {
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
  const mode = reasoningModeOf(config, request.chat_template_kwargs);
  const streams = chat.choices.map(
    (choice) =>
      new ChoiceStream(choice, chat.parsing, config, request.include_reasoning !== false, mode),
  );
  const tokenizer = tokenizerFor(config.tokenizer);
  let roleChunks = 0;

  return {
    token(index, event) {
      const stream = streams[index]!;
      if (!stream.started) {
        stream.started = true;
        sse.send({
          ...head,
          choices: [
            {
              index: stream.choice.index,
              delta: { role: "assistant", content: "" },
              logprobs: null,
              finish_reason: null,
            },
          ],
          prompt_token_ids: request.return_token_ids ? promptIds : null,
          ...(roleChunks++ === 0 ? promptTextField(chat, scope) : {}),
          ...(continuousUsage ? { usage: usage(0) } : {}),
        });
        if (scope.malformed) {
          context.stats.fault("malformed");
          sse.sendRaw(
            `{"id":"${head.id}","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":`,
          );
          return false;
        }
      }
      const last = event.finished !== null;
      const delta = stream.step(event);
      if (
        Object.keys(delta).length === 0 &&
        !last &&
        !request.logprobs &&
        !request.return_token_ids
      )
        return true;
      const choice: Record<string, unknown> = {
        index: stream.choice.index,
        delta,
        logprobs: request.logprobs
          ? { content: chatLogprobEntries(tokenizer, [event.choices], request.top_logprobs ?? 0) }
          : null,
        finish_reason: event.finished
          ? finishReason(stream, chat.parsing, event.finished.reason)
          : null,
        token_ids: request.return_token_ids ? [event.id] : null,
      };
      if (event.finished) choice.stop_reason = event.finished.stopReason;
      return sse.send({
        ...head,
        choices: [choice],
        ...(continuousUsage ? { usage: usage(event.position + 1) } : {}),
      });
    },
    end() {
      const total = served.reduce((sum, r) => sum + r.output.ids.length, 0);
      const metrics = requestMetrics(config, request, served);
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
    },
    abort: (error) => endStreamEarly(sse, error),
  };
}
