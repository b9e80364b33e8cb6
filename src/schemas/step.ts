/** @module One committed step of a rollout (the seed's Step). */
import { z } from "zod";
import { JsonObject, JsonValue } from "./json";
import { ChatMessage } from "./chat";

/** Version of the persisted Step shape. */
export const STEP_SCHEMA_VERSION = 1;

/**
 * One step: the observation the agent saw, the model's response, the action it took and what the
 * environment returned. `observation` is the input of the step (as in the seed); `next_observation`
 * is what `env.step` returned, kept so a resumed driver can continue without re-running the env.
 */
export const Step = z.object({
  schema_version: z.literal(STEP_SCHEMA_VERSION).default(STEP_SCHEMA_VERSION),
  step_id: z.string().min(1),
  step_index: z.int().min(0),
  chat_completions: z.array(ChatMessage).default([]),
  thought: z.string().default(""),
  action: JsonValue,
  observation: JsonValue,
  next_observation: JsonValue.default(null),
  model_response: z.string().default(""),
  info: JsonObject.default({}),
  reward: z.number().default(0),
  done: z.boolean().default(false),
  mc_return: z.number().default(0),
  llm_call_ids: z.array(z.string()).default([]),
  started_at: z.number().default(0),
  duration_ms: z.number().min(0).default(0),
});
export type Step = z.infer<typeof Step>;
/** A step before defaults are applied. */
export type StepInput = z.input<typeof Step>;

/** Deterministic step id: the same step of the same rollout always has the same id, so commits are idempotent. */
export function stepIdFor(rolloutId: string, stepIndex: number): string {
  return `${rolloutId}/step/${stepIndex}`;
}
