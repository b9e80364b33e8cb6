/**
 * @module `@openai/agents` on a rollout's model. An optional integration: the project that uses
 * it installs `@openai/agents@0.14.3` itself (the last line on `openai` 6, which runs on Node 20
 * and in workerd); nothing in `src/sdk`, `src/runtime` or `functions/` imports this file.
 */
import {
  type Model,
  type ModelProvider,
  OpenAIChatCompletionsModel,
  type RunConfig,
  Runner,
} from "@openai/agents";
import OpenAI from "openai";
import type { LlmResource } from "../sdk/resources";

/** What the binding needs of an `llm` resource. Without `fetch` the client calls `base_url` over the network. */
export type AgentsModelTarget = Pick<LlmResource, "base_url" | "api_key" | "model"> &
  Partial<Pick<LlmResource, "fetch">>;

/** An `openai` client over the rollout's gateway. */
function gatewayClient(llm: AgentsModelTarget): OpenAI {
  // No client retries: the gateway already retries upstream faults, and a retry here would be a
  // second recorded call. Chat Completions, not Responses: the gateway speaks vLLM's API.
  return new OpenAI({
    baseURL: llm.base_url,
    apiKey: llm.api_key,
    maxRetries: 0,
    ...(llm.fetch ? { fetch: llm.fetch as never } : {}),
  });
}

/**
 * An `OpenAIChatCompletionsModel` bound to the rollout's gateway: every call it makes is recorded
 * on the rollout (token ids, logprobs) under the running attempt.
 *
 * @example
 * const agent = new Agent({ name: "solver", instructions: "…", model: createOpenAIAgentsModel(llm) });
 */
export function createOpenAIAgentsModel(llm: AgentsModelTarget): OpenAIChatCompletionsModel {
  return new OpenAIChatCompletionsModel(gatewayClient(llm), llm.model);
}

function providerOn(client: OpenAI, model: string): ModelProvider {
  return {
    getModel(): Model {
      return new OpenAIChatCompletionsModel(client, model);
    },
  };
}

/**
 * A `ModelProvider` that resolves every model name to the rollout's model, for agents declared
 * with a string `model` (`"gpt-5"`): a rollout trains one policy, and the gateway would replace
 * any other name with the policy's model anyway.
 *
 * @example
 * new Runner({ modelProvider: createOpenAIAgentsProvider(llm), tracingDisabled: true });
 */
export function createOpenAIAgentsProvider(llm: AgentsModelTarget): ModelProvider {
  return providerOn(gatewayClient(llm), llm.model);
}

/**
 * A `Runner` that runs every agent (handoffs included) on the rollout's model, with tracing
 * disabled: traces would be exported to OpenAI's API, which a Worker neither needs nor reaches;
 * the rollout already records every call and span. `config` adds any other run settings
 * (default: none); `tracingDisabled: false` turns tracing back on for a custom processor.
 *
 * @example
 * const result = await createOpenAIAgentsRunner(llm).run(agent, task.problem, { maxTurns: 4, signal });
 */
export function createOpenAIAgentsRunner(
  llm: AgentsModelTarget,
  config: Partial<Omit<RunConfig, "model" | "modelProvider">> = {},
): Runner {
  const client = gatewayClient(llm);
  return new Runner({
    tracingDisabled: true,
    ...config,
    model: new OpenAIChatCompletionsModel(client, llm.model),
    modelProvider: providerOn(client, llm.model),
  });
}
