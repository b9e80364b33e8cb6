/** @module Agents registered by name: the TypeScript form of the seed's AGENTS_MAPPING. */
import type { JsonObject } from "../schemas/json";
import type { Trajectory } from "../schemas/trajectory";
import type { AgentClass, BaseAgent } from "./base-agent";
import type { BaseEnv, EnvClass } from "./base-env";
import type { FunctionAgentDefinition } from "./function-agent";
import type { LitAgentDefinition } from "./lit-agent";
import type { WorkflowAgentDefinition } from "./agent-workflow";

/** How to build and score one stepwise (BaseAgent + BaseEnv) agent. */
export interface StepwiseAgentDefinition<
  A extends BaseAgent = BaseAgent,
  E extends BaseEnv = BaseEnv,
> {
  kind: "stepwise";
  /** Unique name used in `POST /v1/rollouts {agent}`. */
  name: string;
  envClass: EnvClass<E>;
  /** Merged with `{ task }` and passed to `envClass.fromDict`. Default `{}`. */
  envArgs: JsonObject;
  agentClass: AgentClass<A>;
  /** Passed to the agent's constructor. Default `{}`. */
  agentArgs: JsonObject;
  /** The rollout's final reward from its trajectory. Default: the sum of step rewards. */
  computeTrajectoryReward: (trajectory: Pick<Trajectory, "steps" | "task">) => number;
  /**
   * The engine that runs it: `stepwise` (default: resumable step by step), or the name of an
   * engine registered with `registerEngine` (AgentSDK's engine wrapper), run as attempts.
   */
  engine: string;
  /** Named reward dimensions the agent emits (`emitReward({acc: 1, …})`), which a batch's `filter.metric` may name besides `reward`. */
  rewardDimensions?: readonly string[];
}

/**
 * Any agent the runtime can run. `kind` names the engine that runs it: `stepwise` (BaseAgent +
 * BaseEnv, resumable step by step), or `function`, `lit` and `workflow`, which run as attempts.
 */
export type AgentDefinition =
  StepwiseAgentDefinition | FunctionAgentDefinition | LitAgentDefinition | WorkflowAgentDefinition;

/** The engine kinds. */
export type AgentKind = AgentDefinition["kind"];

/** Options of `defineAgent`; `envArgs`, `agentArgs` and `computeTrajectoryReward` are optional. */
export type DefineAgentOptions<A extends BaseAgent, E extends BaseEnv> = Omit<
  StepwiseAgentDefinition<A, E>,
  "kind" | "envArgs" | "agentArgs" | "computeTrajectoryReward" | "engine"
> &
  Partial<
    Pick<
      StepwiseAgentDefinition<A, E>,
      "envArgs" | "agentArgs" | "computeTrajectoryReward" | "engine"
    >
  >;

const AGENT_NAME = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

/** A name → agent map. One default instance backs `defineAgent`/`getAgentByName`; tests may make their own. */
export class AgentRegistry {
  #agents = new Map<string, AgentDefinition>();

  /** Adds an agent; a second agent under the same name is a programming error. */
  register(definition: AgentDefinition): AgentDefinition {
    if (!AGENT_NAME.test(definition.name)) {
      throw new TypeError(`agent name "${definition.name}" must match ${AGENT_NAME}`);
    }
    if (this.#agents.has(definition.name)) {
      throw new TypeError(`agent "${definition.name}" is already registered`);
    }
    this.#agents.set(definition.name, definition);
    return definition;
  }

  /** The agent registered under `name`, or undefined. */
  get(name: string): AgentDefinition | undefined {
    return this.#agents.get(name);
  }

  /** Every registered agent's name, sorted. */
  names(): string[] {
    return [...this.#agents.keys()].sort();
  }
}

/** The registry the Worker resolves `POST /v1/rollouts {agent}` against. */
export const agentRegistry = new AgentRegistry();

/** Sums step rewards: the seed's default trajectory reward. */
export function sumStepRewards(trajectory: Pick<Trajectory, "steps">): number {
  return trajectory.steps.reduce((total, step) => total + step.reward, 0);
}

/**
 * Registers a stepwise agent under `name` and returns its definition.
 *
 * @example
 * defineAgent({ name: "math", envClass: MathEnv, agentClass: MathAgent });
 */
export function defineAgent<A extends BaseAgent, E extends BaseEnv>(
  options: DefineAgentOptions<A, E>,
  registry: AgentRegistry = agentRegistry,
): StepwiseAgentDefinition<A, E> {
  // Defaults are applied with ?? so an option passed as `undefined` does not erase its default.
  const definition: StepwiseAgentDefinition<A, E> = {
    ...options,
    ...rewardDimensionsOf(options),
    kind: "stepwise",
    envArgs: options.envArgs ?? {},
    agentArgs: options.agentArgs ?? {},
    computeTrajectoryReward: options.computeTrajectoryReward ?? sumStepRewards,
    engine: options.engine ?? "stepwise",
  };
  registry.register(definition as unknown as AgentDefinition);
  return definition;
}

/**
 * `{rewardDimensions}` copied and checked from define options, or nothing: names of reward
 * dimensions a batch's signal filter may use.
 */
export function rewardDimensionsOf(options: {
  name?: string;
  rewardDimensions?: readonly string[];
}): { rewardDimensions?: readonly string[] } {
  if (options.rewardDimensions === undefined) return {};
  if (
    !Array.isArray(options.rewardDimensions) ||
    !options.rewardDimensions.every((name) => typeof name === "string" && name.length > 0)
  ) {
    throw new TypeError(
      `agent "${options.name ?? ""}": rewardDimensions must be a list of non-empty names`,
    );
  }
  return { rewardDimensions: [...options.rewardDimensions] };
}

/** The agent registered under `name` in the default registry, or undefined. */
export function getAgentByName(name: string): AgentDefinition | undefined {
  return agentRegistry.get(name);
}
