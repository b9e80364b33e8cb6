/** @module A finished (or in-progress) rollout's trajectory (the seed's Trajectory). */
import { z } from "zod";
import { AgentTask } from "./agent-task";
import { Step } from "./step";
import { TerminationReason } from "./termination";

/** Version of the persisted Trajectory shape. */
export const TRAJECTORY_SCHEMA_VERSION = 1;

/** The seed's Trajectory: the task, its steps and rewards, and the ids a trainer groups by. */
export const Trajectory = z.object({
  schema_version: z.literal(TRAJECTORY_SCHEMA_VERSION).default(TRAJECTORY_SCHEMA_VERSION),
  task: AgentTask,
  steps: z.array(Step),
  reward: z.number().nullable().default(null),
  toolcall_reward: z.number().default(0),
  res_reward: z.number().default(0),
  prompt_id: z.string().default(""),
  data_id: z.string().default(""),
  training_id: z.string().default(""),
  epoch_id: z.int().default(0),
  iteration_id: z.int().default(0),
  sample_id: z.int().default(0),
  trajectory_id: z.string(),
  application_id: z.string().default(""),
  termination_reason: TerminationReason.nullable().default(null),
});
export type Trajectory = z.infer<typeof Trajectory>;
