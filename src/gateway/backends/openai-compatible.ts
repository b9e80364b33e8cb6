/**
 * @module The `openai` backend: any OpenAI-compatible server. It returns no token ids, so the
 * recording client marks its calls untrainable (evaluation and baselines only).
 */
import type { JsonObject, JsonValue } from "../../schemas/json";
import { OpenAiBackendConfig } from "../../schemas/backend-config";
import type { ModelBackend } from "../model-backend";
import type { BackendDeps, BackendFactory } from "./backend-registry";
import { postUpstreamReply, sendUpstream } from "./upstream-call";

/**
 * vLLM's extra request parameters (its sampling, template and KV-transfer extensions). OpenAI
 * answers 400 "Unrecognized request argument" for each, so they never leave for a plain server.
 */
const VLLM_ONLY_FIELDS = [
  "return_token_ids",
  "return_tokens_as_token_ids",
  "kv_transfer_params",
  "prompt_logprobs",
  "top_k",
  "min_p",
  "repetition_penalty",
  "length_penalty",
  "min_tokens",
  "min_completion_tokens",
  "ignore_eos",
  "stop_token_ids",
  "bad_words",
  "allowed_token_ids",
  "skip_special_tokens",
  "spaces_between_special_tokens",
  "include_stop_str_in_output",
  "truncate_prompt_tokens",
  "use_beam_search",
  "logits_processors",
  "add_generation_prompt",
  "continue_final_message",
  "add_special_tokens",
  "chat_template",
  "chat_template_kwargs",
  "mm_processor_kwargs",
  "documents",
  "guided_json",
  "guided_regex",
  "guided_choice",
  "guided_grammar",
  "guided_decoding_backend",
  "guided_whitespace_pattern",
  "structured_outputs",
  "priority",
  "request_id",
  "cache_salt",
  "vllm_xargs",
] as const;

function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The body a plain OpenAI-compatible server accepts. Besides the vLLM-only fields:
 * - `logprobs` and `top_logprobs` go too. OpenAI accepts them (`top_logprobs` 0..20, only with
 *   `logprobs: true`), but without token ids the logprobs cannot be lined up with tokens, and the
 *   capture rejects a reply whose logprob count differs from its token-id count (0 here), so a
 *   train-mode call would fail on every attempt. Untrainable calls need no logprobs.
 * - `stream_options.continuous_usage_stats` and assistant messages' `reasoning_content` are
 *   vLLM's; some servers (DeepSeek's API among them) answer 400 when they come back.
 */
export function toPlainOpenAiBody(body: JsonObject): JsonObject {
  const plain: JsonObject = { ...body };
  for (const field of VLLM_ONLY_FIELDS) delete plain[field];
  delete plain.logprobs;
  delete plain.top_logprobs;
  if (isJsonObject(plain.stream_options)) {
    const { continuous_usage_stats: _continuous, ...streamOptions } = plain.stream_options;
    plain.stream_options = streamOptions;
  }
  if (Array.isArray(plain.messages)) {
    plain.messages = plain.messages.map((message) => {
      if (!isJsonObject(message) || !("reasoning_content" in message)) return message;
      const { reasoning_content: _reasoning, ...rest } = message;
      return rest;
    });
  }
  return plain;
}

/** Builds the `openai` backend from a validated config. `base_url` is used as given (minus trailing slashes): OpenAI-style URLs carry their own version path. */
export function buildOpenAiBackend(config: OpenAiBackendConfig, deps: BackendDeps): ModelBackend {
  const baseUrl = config.base_url.replace(/\/+$/, "");
  const apiKey = config.api_key;
  return {
    name: "openai",
    returnsTokenIds: false,
    async request(path, body, { signal, attemptTimeoutMs }) {
      const reply = await postUpstreamReply(
        deps.fetch,
        `${baseUrl}${path}`,
        toPlainOpenAiBody(body),
        { apiKey, signal, timeoutMs: attemptTimeoutMs },
      );
      return { ...reply, replica: baseUrl };
    },
    async openStream(path, body, { signal, attemptTimeoutMs }) {
      const response = await sendUpstream(
        deps.fetch,
        `${baseUrl}${path}`,
        toPlainOpenAiBody(body),
        { apiKey, signal, timeoutMs: attemptTimeoutMs },
      );
      return { response, replica: baseUrl };
    },
  };
}

/** Registry entry of the `openai` backend. */
export const openAiBackendFactory: BackendFactory<typeof OpenAiBackendConfig> = {
  schema: OpenAiBackendConfig,
  create: buildOpenAiBackend,
};
