/** @module LitAgent classes: Agent-lightning's `LitAgent` in TypeScript. */
import type { AgentTask } from "../schemas/agent-task";
import { AgentContractError } from "./contract-error";
import type { RolloutResult } from "./function-agent";
import type { LlmResource, ResolvedResources, ResourceSpecs } from "./resources";
import type { Artifacts, RolloutInfo } from "./rollout-info";

/** The resources a LitAgent's rollout receives: the LLM, the rollout's files and each declared resource. */
export type NamedResources<R extends ResourceSpecs = {}> = {
  readonly llm: LlmResource;
  readonly artifacts: Artifacts;
} & ResolvedResources<R>;

/** Resource keys every LitAgent gets; declared resources may not use them. */
export const LIT_AGENT_RESOURCE_FIELDS = ["llm", "artifacts"] as const;

/**
 * An agent class. Override `rollout`, or `trainingRollout` and `validationRollout` to act
 * differently by the rollout's mode (each defaults to `rollout`). A new instance serves each
 * attempt, so fields never leak between rollouts running concurrently in one isolate.
 *
 * @example
 * class Solver extends LitAgent {
 *   async rollout(task: AgentTask, resources: NamedResources, rollout: RolloutInfo) {
 *     const reply = await resources.llm.openai.chat.completions.create({ model: resources.llm.model, messages: [{ role: "user", content: task.problem }] });
 *     return reply.choices[0]?.message.content?.includes(String(task.ground_truth)) ? 1 : 0;
 *   }
 * }
 */
export abstract class LitAgent<T = AgentTask, R extends ResourceSpecs = {}> {
  /** The rollout of either mode. */
  rollout(
    _task: T,
    _resources: NamedResources<R>,
    info: RolloutInfo,
  ): RolloutResult | Promise<RolloutResult> {
    throw new AgentContractError(
      `${this.constructor.name} overrides neither rollout nor ${info.mode === "train" ? "trainingRollout" : "validationRollout"}`,
    );
  }

  /** The rollout when `mode` is `train`. Default: `rollout`. */
  trainingRollout(
    task: T,
    resources: NamedResources<R>,
    rollout: RolloutInfo,
  ): RolloutResult | Promise<RolloutResult> {
    return this.rollout(task, resources, rollout);
  }

  /** The rollout when `mode` is `val`. Default: `rollout`. */
  validationRollout(
    task: T,
    resources: NamedResources<R>,
    rollout: RolloutInfo,
  ): RolloutResult | Promise<RolloutResult> {
    return this.rollout(task, resources, rollout);
  }
}

/** A LitAgent class with a no-argument constructor. */
export type LitAgentClass<T = AgentTask, R extends ResourceSpecs = {}> = new () => LitAgent<T, R>;

/** A registered LitAgent: run as attempts by the LitAgent engine. */
export interface LitAgentDefinition<T = unknown, R extends ResourceSpecs = ResourceSpecs> {
  /** Named reward dimensions the agent emits (`emitReward({acc: 1, …})`), which a batch's `filter.metric` may name besides `reward`. */
  rewardDimensions?: readonly string[];
  kind: "lit";
  name: string;
  agentClass: LitAgentClass<T, R>;
  resources: R;
  /** Turns the rollout's AgentTask into the agent's task type. Default: the AgentTask itself. */
  task: (task: AgentTask) => T;
}
