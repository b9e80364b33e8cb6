/** @module What a batch tracker reaches beyond its own storage: rollout sessions and the agent registry. */
import type { RolloutSpec } from "../../schemas/rollout-api";
import type { CreateResult, FinishResult } from "../session/session-results";
import type { RolloutOutcome } from "./batch-storage";

/** The rollout sessions a batch fans out to (one Durable Object per rollout id). */
export interface RolloutSessionsPort {
  /** `RolloutSession.create`: idempotent by rollout id, so it also answers "what state is it in". */
  create(spec: RolloutSpec): Promise<CreateResult>;
  /** `RolloutSession.cancel`. */
  cancel(rolloutId: string): Promise<FinishResult>;
  /** How the rollout ended (read from its session), or undefined when it does not exist or has not ended. */
  outcome(rolloutId: string): Promise<RolloutOutcome | undefined>;
}

/** Which agent names a batch may use (registered agents and `external`). */
export interface AgentCatalog {
  has(name: string): boolean;
  names(): string[];
  /** The agent's own limit on rollouts in flight (a workflow's `concurrency.max_concurrent`), or null. */
  maxConcurrent(name: string): number | null;
  /** The reward dimensions the agent declares it emits (`rewardDimensions`), which a filter may name; [] when none. */
  rewardDimensions(name: string): readonly string[];
}
