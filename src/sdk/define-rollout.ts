/** @module Registering function agents: `defineRollout` and Agent-lightning's `@rollout` as `rollout(fn, …)`. */
import { type AgentRegistry, agentRegistry, rewardDimensionsOf } from "./agent-registry";
import { checkDestructuredContext, checkResourceSpecs } from "./definition-checks";
import {
  type FunctionAgentDefinition,
  ROLLOUT_CONTEXT_FIELDS,
  type RolloutFunction,
} from "./function-agent";
import type { ResourceSpecs } from "./resources";

/** Options of `defineRollout`. Declare `resources` before `run`, so TypeScript types `run`'s context from them. */
export interface DefineRolloutOptions<R extends ResourceSpecs> {
  /** Named reward dimensions the agent emits (`emitReward({acc: 1, …})`), which a batch's `filter.metric` may name besides `reward`. */
  rewardDimensions?: readonly string[];
  /** Unique name used in `POST /v1/rollouts {agent}`. */
  name: string;
  /** Named resources the context gets, by key. Default: none. */
  resources?: R;
  run: RolloutFunction<R>;
}

/**
 * Registers a function agent. Asking the context for a field that is not there is a type error,
 * and (for destructured contexts) a TypeError here, at registration.
 *
 * @example
 * defineRollout({
 *   name: "solver",
 *   resources: { promptTemplate: promptTemplate("Solve: {problem}") },
 *   run: async ({ task, llm, promptTemplate }) => {
 *     const reply = await llm.openai.chat.completions.create({ model: llm.model, messages: [{ role: "user", content: promptTemplate.format({ problem: task.problem }) }] });
 *     return reply.choices[0]?.message.content?.includes(String(task.ground_truth)) ? 1 : 0;
 *   },
 * });
 */
export function defineRollout<R extends ResourceSpecs = {}>(
  options: DefineRolloutOptions<R>,
  registry: AgentRegistry = agentRegistry,
): FunctionAgentDefinition<R> {
  const resources = options.resources ?? ({} as R);
  if (typeof options.run !== "function")
    throw new TypeError(`agent "${options.name}": run must be a function`);
  checkResourceSpecs(options.name, resources, ROLLOUT_CONTEXT_FIELDS);
  checkDestructuredContext(options.name, options.run, ROLLOUT_CONTEXT_FIELDS, resources);
  const definition: FunctionAgentDefinition<R> = {
    kind: "function",
    name: options.name,
    resources,
    run: options.run,
    ...rewardDimensionsOf(options),
  };
  registry.register(definition as unknown as FunctionAgentDefinition);
  return definition;
}

/**
 * Registers `fn` as a function agent: the `@rollout` decorator of Agent-lightning, with the name
 * given explicitly (TypeScript has no reliable function names at run time once bundled).
 *
 * @example
 * export const echo = rollout(async ({ task, llm }) => {
 *   const reply = await llm.openai.chat.completions.create({ model: llm.model, messages: [{ role: "user", content: task.problem }] });
 *   emitReward(reply.choices[0]?.message.content ? 1 : 0);
 * }, { name: "echo" });
 */
export function rollout<R extends ResourceSpecs = {}>(
  fn: RolloutFunction<R>,
  options: Omit<DefineRolloutOptions<R>, "run">,
  registry: AgentRegistry = agentRegistry,
): FunctionAgentDefinition<R> {
  return defineRollout({ ...options, run: fn }, registry);
}
