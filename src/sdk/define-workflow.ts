/** @module Registering workflows and their graders (Osmosis): `defineWorkflow`. */
import type { JsonObject } from "../schemas/json";
import { AgentWorkflow, Grader, type WorkflowAgentDefinition } from "./agent-workflow";
import { type AgentRegistry, agentRegistry } from "./agent-registry";
import { checkResourceSpecs } from "./definition-checks";
import type { ResourceSpecs } from "./resources";

/** Options of `defineWorkflow`. */
export interface DefineWorkflowOptions<Config, R extends ResourceSpecs> {
  name: string;
  workflow: new () => AgentWorkflow<Config, R>;
  /** Default: none (the reward is the last emitted one). */
  grader?: new () => Grader<Config>;
  /** Handed to the workflow and the grader as `ctx.config`. Default `{}`. */
  config?: Config;
  /** Named resources, by key (`ctx.resources`). Default: none. */
  resources?: R;
}

/**
 * Registers a workflow and its grader under `name`.
 *
 * @example
 * defineWorkflow({ name: "solve", workflow: Solve, grader: ExactMatch, config: { style: "brief" } });
 */
export function defineWorkflow<Config = JsonObject, R extends ResourceSpecs = {}>(options: DefineWorkflowOptions<Config, R>, registry: AgentRegistry = agentRegistry): WorkflowAgentDefinition<Config, R> {
  const { name, workflow, grader } = options;
  if (typeof workflow !== "function" || !(workflow.prototype instanceof AgentWorkflow)) throw new TypeError(`agent "${name}": workflow must be a class extending AgentWorkflow`);
  if (grader !== undefined && (typeof grader !== "function" || !(grader.prototype instanceof Grader))) throw new TypeError(`agent "${name}": grader must be a class extending Grader`);
  const resources = options.resources ?? ({} as R);
  checkResourceSpecs(name, resources, []);
  const definition: WorkflowAgentDefinition<Config, R> = { kind: "workflow", name, workflow, grader: grader ?? null, config: options.config ?? ({} as Config), resources };
  registry.register(definition as unknown as WorkflowAgentDefinition);
  return definition;
}
