/** @module Registering LitAgent classes: `defineLitAgent`. */
import type { AgentTask } from "../schemas/agent-task";
import { type AgentRegistry, agentRegistry, rewardDimensionsOf } from "./agent-registry";
import { checkResourceSpecs } from "./definition-checks";
import {
  LIT_AGENT_RESOURCE_FIELDS,
  LitAgent,
  type LitAgentClass,
  type LitAgentDefinition,
} from "./lit-agent";
import type { ResourceSpecs } from "./resources";

/** Options of `defineLitAgent`. */
export interface DefineLitAgentOptions<T, R extends ResourceSpecs> {
  /** Named reward dimensions the agent emits (`emitReward({acc: 1, …})`), which a batch's `filter.metric` may name besides `reward`. */
  rewardDimensions?: readonly string[];
  name: string;
  agentClass: LitAgentClass<T, R>;
  /** Named resources, by key. Default: none. */
  resources?: R;
  /** Default: the AgentTask itself (give one when the class's task type differs). */
  task?: (task: AgentTask) => T;
}

function overrides(
  agentClass: LitAgentClass<unknown, ResourceSpecs>,
  method: "rollout" | "trainingRollout" | "validationRollout",
): boolean {
  return agentClass.prototype[method] !== LitAgent.prototype[method];
}

/**
 * Registers a LitAgent class under `name`.
 *
 * @example
 * defineLitAgent({ name: "solver", agentClass: Solver });
 */
export function defineLitAgent<T = AgentTask, R extends ResourceSpecs = {}>(
  options: DefineLitAgentOptions<T, R>,
  registry: AgentRegistry = agentRegistry,
): LitAgentDefinition<T, R> {
  const { name, agentClass } = options;
  if (typeof agentClass !== "function" || !(agentClass.prototype instanceof LitAgent))
    throw new TypeError(`agent "${name}": agentClass must be a class extending LitAgent`);
  const erased = agentClass as unknown as LitAgentClass<unknown, ResourceSpecs>;
  if (
    !overrides(erased, "rollout") &&
    !(overrides(erased, "trainingRollout") && overrides(erased, "validationRollout"))
  ) {
    throw new TypeError(
      `agent "${name}": ${agentClass.name} must override rollout, or both trainingRollout and validationRollout`,
    );
  }
  const resources = options.resources ?? ({} as R);
  checkResourceSpecs(name, resources, LIT_AGENT_RESOURCE_FIELDS);
  const definition: LitAgentDefinition<T, R> = {
    kind: "lit",
    name,
    agentClass,
    resources,
    task: options.task ?? ((task) => task as unknown as T),
    ...rewardDimensionsOf(options),
  };
  registry.register(definition as unknown as LitAgentDefinition);
  return definition;
}
