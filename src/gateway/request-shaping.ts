/** @module Rewriting a caller's request into what the engine gets: policy, token capture, limits. */
import { InvalidInputError, LimitExceededError } from "../errors";
import type { ChatMessage, ToolDefinition } from "../schemas/chat";
import type { JsonObject } from "../schemas/json";
import type { PolicySnapshot } from "../schemas/policy";
import type { RolloutConfig } from "../schemas/rollout-config";
import { withCacheSalt } from "./cache-salt";
import type { BackendCallOptions, ModelBackend, UpstreamPath } from "./model-backend";
import { maxTokensForNextCall, promptTokenUpperBound } from "./prompt-budget";

/** The rollout's budgets at the time of the call. */
export interface CallLimits {
  max_prompt_length: number;
  max_response_length: number;
  max_tokens_per_call: number | null;
  /** Completion tokens the rollout generated so far (the response budget is per trajectory). */
  completion_tokens_used: number;
  /** Prompt + completion length of the rollout's previous call, and its message count + 1. */
  last_context_tokens: number;
  last_context_messages: number;
}

/** A rollout's limits for its next call, from its config and what it has used so far. */
export function callLimitsFor(
  config: Pick<RolloutConfig, "max_prompt_length" | "max_response_length" | "max_tokens_per_call">,
  used: { completion_tokens: number; last_context_tokens: number; last_context_messages: number },
): CallLimits {
  return {
    max_prompt_length: config.max_prompt_length,
    max_response_length: config.max_response_length,
    max_tokens_per_call: config.max_tokens_per_call,
    completion_tokens_used: used.completion_tokens,
    last_context_tokens: used.last_context_tokens,
    last_context_messages: used.last_context_messages,
  };
}

/**
 * The body sent upstream. The policy's model always replaces the caller's (a rollout's gateway
 * serves exactly one policy); in training mode the policy's temperature and top_p replace the
 * caller's and logprobs of the sampled tokens are requested. `return_token_ids` is always on.
 * After a weight sync (version > 0) `cache_salt` names the policy version (cache-salt.ts).
 * `max_tokens` is clamped to the remaining response budget.
 */
export function shapeRequest(
  path: UpstreamPath,
  body: JsonObject,
  policy: PolicySnapshot,
  options: { defaultModel: string; train: boolean; limits: CallLimits },
): JsonObject {
  if (options.train) refuseSeveralChoices(body);
  const shaped: JsonObject = {
    ...withCacheSalt(body, policy.policy_version),
    model: policy.model ?? options.defaultModel,
    return_token_ids: true,
  };
  if (options.train) {
    shaped.temperature = policy.sampling.temperature;
    shaped.top_p = policy.sampling.top_p;
    if (path === "/chat/completions") {
      shaped.logprobs = true;
      shaped.top_logprobs = typeof body.top_logprobs === "number" ? body.top_logprobs : 0;
    } else {
      // Text completions take the number of top logprobs; 0 still returns the sampled token's.
      shaped.logprobs = typeof body.logprobs === "number" ? body.logprobs : 0;
    }
  }
  const cap = maxTokensForNextCall(options.limits, options.limits.completion_tokens_used);
  if (cap <= 0) {
    throw new LimitExceededError(
      "MAX_RESPONSE_LENGTH",
      `the rollout's response budget of ${options.limits.max_response_length} tokens is spent`,
    );
  }
  const requested = body.max_completion_tokens ?? body.max_tokens;
  shaped.max_tokens =
    typeof requested === "number" && requested > 0 ? Math.min(requested, cap) : cap;
  delete shaped.max_completion_tokens;
  return shaped;
}

/**
 * Training mode records one trajectory per rollout, and an agent can follow only one answer, so
 * `n > 1` (or `best_of > 1`) is refused rather than recorded as choice 0 with the other samples'
 * tokens thrown away. GRPO groups come from running the same task `group_size` times (each run a
 * rollout of its own, sharing the prompt's prefix cache on its replica). Outside training mode the
 * request passes through and the call records choice 0.
 */
function refuseSeveralChoices(body: JsonObject): void {
  for (const field of ["n", "best_of"] as const) {
    const value = body[field];
    if (typeof value === "number" && value > 1) {
      const message = `${field} must be 1 in training mode (got ${value}): each sample is its own rollout; run the task once per group member instead`;
      throw new InvalidInputError(message, { status: 422, details: [{ path: field, message }] });
    }
  }
}

/**
 * Refuses a prompt longer than `max_prompt_length` without sending it. A tokenizer-free upper
 * bound settles the common case; only a prompt near the limit costs a `/tokenize` round trip.
 * Text prompts given as token ids are measured exactly; text prompts given as strings are left
 * to the server when the bound is exceeded (vLLM's `/tokenize` needs the chat template for chats).
 */
export async function checkPromptLength(
  path: UpstreamPath,
  body: JsonObject,
  limits: CallLimits,
  backend: ModelBackend,
  options: BackendCallOptions,
): Promise<void> {
  const limit = limits.max_prompt_length;
  if (path === "/completions") {
    const prompt = body.prompt;
    if (
      Array.isArray(prompt) &&
      prompt.every((id) => typeof id === "number") &&
      prompt.length > limit
    ) {
      throw new LimitExceededError(
        "MAX_PROMPT_LENGTH",
        `prompt of ${prompt.length} tokens exceeds max_prompt_length ${limit}`,
      );
    }
    return;
  }
  const messages = (Array.isArray(body.messages) ? body.messages : []) as ChatMessage[];
  const tools = (Array.isArray(body.tools) ? body.tools : []) as ToolDefinition[];
  const bound = promptTokenUpperBound(messages, tools, {
    contextTokens: limits.last_context_tokens,
    contextMessages: limits.last_context_messages,
  });
  if (bound <= limit || !backend.countChatTokens) return;
  const exact = await backend.countChatTokens(body, options);
  if (exact !== null && exact > limit)
    throw new LimitExceededError(
      "MAX_PROMPT_LENGTH",
      `prompt of ${exact} tokens exceeds max_prompt_length ${limit}`,
    );
}
