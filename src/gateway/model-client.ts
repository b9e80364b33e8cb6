/** @module The recording model client: one chat call in, one validated LlmCall out. */
import { ModelError } from "../errors";
import type { ChatMessage, ToolDefinition } from "../schemas/chat";
import type { JsonObject } from "../schemas/json";
import type { LlmCallInput } from "../schemas/llm-call";
import { VllmChatCompletion } from "../schemas/vllm-chat";
import type { ModelResponse } from "../sdk/model-response";
import type { ModelBackend } from "./model-backend";
import { DEFAULT_RETRY_POLICY, type RetryPolicy, withRetries } from "./retry";

/** What the caller wants generated. Sampling fields the trainer controls arrive already resolved. */
export interface ChatInput {
  messages: ChatMessage[];
  tools: ToolDefinition[];
  maxTokens: number;
  temperature: number;
  topP: number;
  seed: number | null;
  /** Overrides the client's model name. */
  model?: string | null;
}

/** Which rollout and step a call belongs to; `train` asks the engine for logprobs. */
export interface CallContext {
  rolloutId: string;
  stepId: string | null;
  callId: string;
  train: boolean;
  signal?: AbortSignal;
}

/** A response for the agent plus the record of the call for the session. */
export interface ChatResult {
  response: ModelResponse;
  call: LlmCallInput;
}

/** Options of `createModelClient`. */
export interface ModelClientOptions {
  backend: ModelBackend;
  /** Served model name sent as `model`. */
  model: string;
  retry?: RetryPolicy;
  now?: () => number;
}

/** Calls a backend for chat completions, retrying transient faults, and records token ids and logprobs. */
export interface ModelClient {
  chat(input: ChatInput, context: CallContext): Promise<ChatResult>;
  /** Exact prompt tokens for `input`, or null when the backend cannot count. */
  countPromptTokens(input: ChatInput, context: Pick<CallContext, "rolloutId" | "signal">): Promise<number | null>;
}

/** The request body sent upstream: vLLM's token-id and logprob switches on, tools only when given. */
export function buildChatBody(input: ChatInput, model: string, train: boolean): JsonObject {
  const body: JsonObject = {
    model: input.model ?? model,
    messages: input.messages as JsonObject[],
    max_tokens: input.maxTokens,
    temperature: input.temperature,
    top_p: input.topP,
    return_token_ids: true,
  };
  if (input.tools.length > 0) body.tools = input.tools as JsonObject[];
  if (input.seed !== null) body.seed = input.seed;
  if (train) {
    body.logprobs = true;
    body.top_logprobs = 0;
  }
  return body;
}

/**
 * Validates a reply and turns it into the agent's response and the LlmCall record. A reply that
 * does not validate is retryable: a truncated or garbled body is a transient upstream fault.
 */
function capture(raw: unknown, body: JsonObject, context: CallContext, meta: { backend: ModelBackend; replica: string; latencyMs: number; attempts: number; createdAt: number }): ChatResult {
  const parsed = VllmChatCompletion.safeParse(raw);
  if (!parsed.success) {
    throw new ModelError(`upstream reply is not a chat completion: ${parsed.error.issues[0]?.message ?? "invalid"} at ${parsed.error.issues[0]?.path.join(".") ?? "?"}`, { retryable: true });
  }
  const reply = parsed.data;
  const choice = reply.choices[0]!;
  const completionIds = choice.token_ids ?? [];
  const logprobs = choice.logprobs?.content?.map((entry) => entry.logprob) ?? [];
  if (logprobs.length > 0 && logprobs.length !== completionIds.length) {
    throw new ModelError(`engine returned ${logprobs.length} logprobs for ${completionIds.length} completion tokens`, { retryable: true });
  }
  const toolCalls = choice.message.tool_calls ?? [];
  const message: ChatMessage = { role: "assistant", content: choice.message.content ?? (toolCalls.length ? null : "") };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (choice.message.reasoning_content) message.reasoning_content = choice.message.reasoning_content;
  const promptIds = reply.prompt_token_ids ?? [];
  const usage = reply.usage ?? { prompt_tokens: promptIds.length, completion_tokens: completionIds.length, total_tokens: promptIds.length + completionIds.length };
  const { messages: _messages, ...params } = body;
  return {
    response: { message, text: choice.message.content ?? "", toolCalls, finishReason: choice.finish_reason },
    call: {
      call_id: context.callId,
      rollout_id: context.rolloutId,
      step_id: context.stepId,
      request: { ...params, messages: body.messages ?? [] },
      response_message: message,
      prompt_token_ids: promptIds,
      completion_token_ids: completionIds,
      logprobs,
      logprobs_mode: logprobs.length > 0 ? "raw_logprobs" : "none",
      finish_reason: choice.finish_reason,
      usage: { prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens, total_tokens: usage.total_tokens },
      backend: meta.backend.name,
      replica: meta.replica,
      latency_ms: meta.latencyMs,
      attempts: meta.attempts,
      trainable: meta.backend.returnsTokenIds && promptIds.length > 0 && completionIds.length > 0 && logprobs.length === completionIds.length,
      created_at: meta.createdAt,
    },
  };
}

/**
 * Builds the client the step loop uses for model calls.
 *
 * @example
 * const client = createModelClient({ backend: createVllmBackend({ baseUrl }), model: "sim-qwen3" });
 */
export function createModelClient(options: ModelClientOptions): ModelClient {
  const retry = options.retry ?? DEFAULT_RETRY_POLICY;
  const now = options.now ?? Date.now;
  return {
    async chat(input, context) {
      const body = buildChatBody(input, options.model, context.train);
      const started = now();
      const { value, attempts } = await withRetries(retry, context.signal, async () => {
        const reply = await options.backend.request("/chat/completions", body, { rolloutId: context.rolloutId, signal: context.signal });
        return capture(reply.body, body, context, { backend: options.backend, replica: reply.replica, latencyMs: 0, attempts: 1, createdAt: started });
      });
      value.call.latency_ms = now() - started;
      value.call.attempts = attempts;
      return value;
    },
    async countPromptTokens(input, context) {
      if (!options.backend.countChatTokens) return null;
      return options.backend.countChatTokens(buildChatBody(input, options.model, false), context);
    },
  };
}
