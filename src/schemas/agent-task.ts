/** @module The task one rollout works on (the seed's AgentTask). */
import { z } from "zod";
import { JsonObject, JsonValue } from "./json";

/** Version of the persisted AgentTask shape; bump with a fixture when the shape changes. */
export const AGENT_TASK_SCHEMA_VERSION = 1;

/**
 * One task for one rollout. Field names follow the seed; all but `problem` have defaults so a
 * caller can send `{problem, ground_truth}` and the API fills the rest.
 */
export const AgentTask = z.object({
  schema_version: z.literal(AGENT_TASK_SCHEMA_VERSION).default(AGENT_TASK_SCHEMA_VERSION),
  task_id: z.string().default(""),
  sample_id: z.int().min(0).default(0),
  iteration: z.int().min(0).default(0),
  agent_name: z.string().default(""),
  problem: z.string(),
  ground_truth: JsonValue.default(null),
  prompt_id: z.string().default(""),
  content: JsonValue.default(null),
  extra_args: JsonObject.default({}),
});
export type AgentTask = z.infer<typeof AgentTask>;
/** What a caller may send for a task (defaults not yet applied). */
export type AgentTaskInput = z.input<typeof AgentTask>;

/**
 * `extra_args` with any verl-style label removed (`reward_model.ground_truth`): only the grader or
 * environment sees the label, through `ground_truth`, never an agent or workflow. A copy; the
 * input is not changed.
 */
export function withoutGroundTruth(extraArgs: AgentTask["extra_args"]): AgentTask["extra_args"] {
  const rewardModel = extraArgs.reward_model;
  if (
    typeof rewardModel !== "object" ||
    rewardModel === null ||
    Array.isArray(rewardModel) ||
    !("ground_truth" in rewardModel)
  )
    return extraArgs;
  const { ground_truth: _label, ...rest } = rewardModel;
  return { ...extraArgs, reward_model: rest };
}
