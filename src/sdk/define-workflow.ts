/** @module Registering workflows and their graders (Osmosis): `defineWorkflow`. */
import type { JsonObject } from "../schemas/json";
import { AgentWorkflow, Grader, type WorkflowAgentDefinition } from "./agent-workflow";
import { type AgentRegistry, agentRegistry, rewardDimensionsOf } from "./agent-registry";
import { checkResourceSpecs } from "./definition-checks";
import type { ResourceSpecs } from "./resources";
import { workflowLimits } from "./workflow-config";

/** Options of `defineWorkflow`. */
export interface DefineWorkflowOptions<Config, R extends ResourceSpecs> {
  /** Named reward dimensions the agent emits (`emitReward({acc: 1, …})`), which a batch's `filter.metric` may name besides `reward`. */
  rewardDimensions?: readonly string[];
  /** Default: `config.name` (Osmosis names a workflow by its config). One of the two is required. */
  name?: string;
  workflow: new (config?: Config) => AgentWorkflow<Config, R>;
  /** Default: none (the reward is the last emitted one). */
  grader?: new (config?: Config) => Grader<Config>;
  /**
   * Handed to the workflow and the grader as `ctx.config` and to their constructors. Its reserved
   * fields are `AgentWorkflowConfig`'s: `name`, `description`, `concurrency.max_concurrent`. Default `{}`.
   */
  config?: Config;
  /** Named resources, by key (`ctx.resources`). Default: none. */
  resources?: R;
}

/**
 * Registers a workflow and its grader under `name`.
 *
 * @example
 * defineWorkflow({ name: "solve", workflow: Solve, grader: ExactMatch, config: { style: "brief", concurrency: { max_concurrent: 16 } } });
 */
export function defineWorkflow<Config = JsonObject, R extends ResourceSpecs = {}>(
  options: DefineWorkflowOptions<Config, R>,
  registry: AgentRegistry = agentRegistry,
): WorkflowAgentDefinition<Config, R> {
  const { workflow, grader } = options;
  const configName = (options.config as { name?: unknown } | undefined)?.name;
  const name = options.name ?? (typeof configName === "string" ? configName : "");
  if (typeof workflow !== "function" || !(workflow.prototype instanceof AgentWorkflow))
    throw new TypeError(`agent "${name}": workflow must be a class extending AgentWorkflow`);
  if (
    grader !== undefined &&
    (typeof grader !== "function" || !(grader.prototype instanceof Grader))
  )
    throw new TypeError(`agent "${name}": grader must be a class extending Grader`);
  const resources = options.resources ?? ({} as R);
  checkResourceSpecs(name, resources, []);
  const config = options.config ?? ({} as Config);
  const { description, maxConcurrent } = workflowLimits(name, config);
  const definition: WorkflowAgentDefinition<Config, R> = {
    kind: "workflow",
    name,
    workflow,
    grader: grader ?? null,
    config,
    description,
    maxConcurrent,
    resources,
    ...rewardDimensionsOf(options),
  };
  registry.register(definition as unknown as WorkflowAgentDefinition);
  return definition;
}
