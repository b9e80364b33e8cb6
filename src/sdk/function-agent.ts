/** @module Function agents: Agent-lightning's `@rollout` in TypeScript. */
import type { AgentTask } from "../schemas/agent-task";
import type { SpanInput } from "../schemas/span";
import type { LlmResource, ResolvedResources, ResourceSpecs } from "./resources";
import type { Artifacts, RolloutInfo } from "./rollout-info";

/** What every function agent's context holds besides its declared resources. */
export interface BaseRolloutContext {
  /** The rollout's task (problem, ground_truth, extra_args, …). */
  task: AgentTask;
  /** The model, bound to this rollout; `llm.openai` is a ready client. */
  llm: LlmResource;
  /** The rollout and attempt being run (`rollout_id`, `mode`, `attempt`). */
  rollout: RolloutInfo;
  /** Aborts when the attempt is given up. */
  signal: AbortSignal;
  /** Files under the rollout's prefix in R2. */
  artifacts: Artifacts;
  /** Marks the attempt alive (see `heartbeat` in emitters). */
  heartbeat: () => void;
}

/** Context fields every function agent may destructure. */
export const ROLLOUT_CONTEXT_FIELDS = [
  "task",
  "llm",
  "rollout",
  "signal",
  "artifacts",
  "heartbeat",
] as const;

/** A function agent's context: the base fields plus each declared resource under its key. */
export type RolloutContext<R extends ResourceSpecs = {}> = BaseRolloutContext &
  ResolvedResources<R>;

/**
 * What an agent's rollout may return: the final reward, nothing (the reward is the last one
 * emitted), or spans to add (the reward is then the last reward among them and the emitted ones).
 */
export type RolloutResult = number | SpanInput[] | null | undefined | void;

/** A function agent. */
export type RolloutFunction<R extends ResourceSpecs = {}> = (
  context: RolloutContext<R>,
) => RolloutResult | Promise<RolloutResult>;

/** A registered function agent: run as attempts by the function engine. */
export interface FunctionAgentDefinition<R extends ResourceSpecs = ResourceSpecs> {
  kind: "function";
  name: string;
  resources: R;
  run: RolloutFunction<R>;
  /** Named reward dimensions the agent emits (`emitReward({acc: 1, …})`), which a batch's `filter.metric` may name besides `reward`. */
  rewardDimensions?: readonly string[];
}
