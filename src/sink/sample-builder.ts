/** @module Cutting token-exact training samples from a rollout's recorded LLM calls. (Placeholder: being written.) */
import type { LlmCall } from "../schemas/llm-call";
import type { TerminationReason, RolloutStatus } from "../schemas/termination";
import type { TrainingSample } from "../schemas/training-sample";

/** What the builder needs to know about one finished rollout. */
export interface SampleBuildInput {
  rollout_id: string;
  status: RolloutStatus;
  termination_reason: TerminationReason | null;
  reward: number | null;
  /** Calls in the order they were made. */
  calls: LlmCall[];
  uid: string;
  sample_index: number;
  mode: "cumulative" | "per_call";
}

/** The samples and how many times the prefix broke. */
export interface SampleBuildResult {
  samples: TrainingSample[];
  drift_splits: number;
}

/** Builds the samples. */
export function buildTrainingSamples(_input: SampleBuildInput): SampleBuildResult {
  return { samples: [], drift_splits: 0 };
}
