/** @module Bodies and views of the rollouts HTTP API. */
import { z } from "zod";
import { AgentTask } from "./agent-task";
import { RolloutConfig } from "./rollout-config";
import { RolloutStatus, TerminationReason } from "./termination";
import { Trajectory } from "./trajectory";
import { LlmCall } from "./llm-call";

/** Rollout ids become DO names and R2 key parts: keep them printable and bounded. */
export const RolloutId = z.string().regex(/^[A-Za-z0-9._:-]{1,200}$/, "rollout_id must be 1-200 characters of A-Z a-z 0-9 . _ : -");

/** `POST /v1/rollouts` body. `rollout_id` makes creation idempotent; without it one is generated. */
export const CreateRolloutRequest = z.object({
  agent: z.string().min(1, "agent must name a registered agent"),
  task: AgentTask,
  config: RolloutConfig.default(RolloutConfig.parse({})),
  rollout_id: RolloutId.optional(),
}).strict();
export type CreateRolloutRequest = z.infer<typeof CreateRolloutRequest>;

/** What the session stores at creation. */
export const RolloutSpec = z.object({
  rollout_id: RolloutId,
  agent: z.string(),
  task: AgentTask,
  config: RolloutConfig,
  created_at: z.number(),
});
export type RolloutSpec = z.infer<typeof RolloutSpec>;

/** `GET /v1/rollouts/:id`: status, outcome, the trajectory with its steps, and every LLM call. */
export const RolloutView = z.object({
  rollout_id: z.string(),
  agent: z.string(),
  status: RolloutStatus,
  termination_reason: TerminationReason.nullable(),
  reward: z.number().nullable(),
  error: z.string().nullable(),
  created_at: z.number(),
  updated_at: z.number(),
  finished_at: z.number().nullable(),
  config: RolloutConfig,
  usage: z.object({ prompt_tokens: z.int(), completion_tokens: z.int(), llm_calls: z.int() }),
  trajectory: Trajectory,
  llm_calls: z.array(LlmCall),
});
export type RolloutView = z.infer<typeof RolloutView>;
