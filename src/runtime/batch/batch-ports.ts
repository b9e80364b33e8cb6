/** @module What a batch tracker reaches beyond its own storage: rollout sessions and the agent registry. */
import type { RolloutSpec } from "../../schemas/rollout-api";
import type {
  CancelOptions,
  CreateResult,
  FinishResult,
  ForkPrefix,
  ForkSourceResult,
} from "../session";
import type { AgentDefinition } from "../../sdk/agent-registry";
import type { RolloutOutcome } from "./batch-storage";

/** The rollout sessions a batch fans out to (one Durable Object per rollout id). */
export interface RolloutSessionsPort {
  /** `RolloutSession.create`: idempotent by rollout id, so it also answers "what state is it in". */
  create(spec: RolloutSpec): Promise<CreateResult>;
  /** `RolloutSession.cancel` (`superseded`: the slot runs again, so the session publishes the run superseded). */
  cancel(rolloutId: string, options?: CancelOptions): Promise<FinishResult>;
  /** How the rollout ended (read from its session), or undefined when it does not exist or has not ended. */
  outcome(rolloutId: string): Promise<RolloutOutcome | undefined>;
  /** `RolloutSession.forkSource` of the parent: what a tree child at `atStep` copies. */
  forkSource(parentId: string, atStep: number): Promise<ForkSourceResult>;
  /** `RolloutSession.createFork` of the child (idempotent by rollout id, like `create`). */
  createFork(spec: RolloutSpec, prefix: ForkPrefix): Promise<CreateResult>;
}

/** Which agent names a batch may use (registered agents and `external`). */
export interface AgentCatalog {
  has(name: string): boolean;
  names(): string[];
  /** The agent's own limit on rollouts in flight (a workflow's `concurrency.max_concurrent`), or null. */
  maxConcurrent(name: string): number | null;
  /** The reward dimensions the agent declares it emits (`rewardDimensions`), which a filter may name; [] when none. */
  rewardDimensions(name: string): readonly string[];
  /** The agent's definition (undefined for `external` and unknown names): a tree child's fork plan reads it. */
  definition(name: string): AgentDefinition | undefined;
}
