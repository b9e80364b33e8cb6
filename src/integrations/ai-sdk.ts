/**
 * @module The Vercel AI SDK on a rollout's model. An optional integration: the project that uses
 * it installs `ai@6.0.325` and `@ai-sdk/openai-compatible@2.0.92` itself (the last lines that run
 * on Node 20); nothing in `src/sdk`, `src/runtime` or `functions/` imports this file.
 */
import { createOpenAICompatible, type OpenAICompatibleProvider } from "@ai-sdk/openai-compatible";
import type { LanguageModel } from "ai";
import type { LlmResource } from "../sdk/resources";

/** What the binding needs of an `llm` resource. Without `fetch` the provider calls `base_url` over the network. */
export type AiSdkModelTarget = Pick<LlmResource, "base_url" | "api_key" | "model"> &
  Partial<Pick<LlmResource, "fetch">>;

/**
 * An OpenAI-compatible provider bound to the rollout's gateway: every call a model of it makes is
 * recorded on the rollout (token ids, logprobs) under the running attempt. `name` labels the
 * provider in the AI SDK's metadata (default `"edge-rollout"`).
 *
 * @example
 * const provider = createAiSdkProvider(llm);
 * await generateText({ model: provider.chatModel(llm.model), prompt: task.problem, maxRetries: 0 });
 */
export function createAiSdkProvider(
  llm: AiSdkModelTarget,
  options: { name?: string } = {},
): OpenAICompatibleProvider {
  return createOpenAICompatible({
    name: options.name ?? "edge-rollout",
    baseURL: llm.base_url,
    apiKey: llm.api_key,
    ...(llm.fetch ? { fetch: llm.fetch } : {}),
  });
}

/**
 * The rollout's model as an AI SDK chat model. Pass `maxRetries: 0` to `generateText` /
 * `streamText`: the gateway already retries upstream faults, and an SDK retry would be a second
 * recorded call.
 *
 * @example
 * const { text } = await generateText({ model: createAiSdkModel(llm), prompt: task.problem, maxRetries: 0, abortSignal: signal });
 */
export function createAiSdkModel(llm: AiSdkModelTarget): LanguageModel {
  return createAiSdkProvider(llm).chatModel(llm.model);
}
