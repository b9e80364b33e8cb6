/** @module Bodies and answers of the runner API: claiming external rollouts, heartbeats, ending attempts. */
import { z } from "zod";
import { JsonObject } from "./json";
import { AgentTask } from "./agent-task";
import { RolloutConfig } from "./rollout-config";
import { RolloutId } from "./rollout-api";
import { RolloutGroup } from "./rollout-group";

/** A runner's self-chosen id (`host-pid-uuid`): shown per batch, stamped on leases and lost-attempt spans. */
export const RunnerId = z
  .string()
  .regex(
    /^[A-Za-z0-9._:@-]{1,120}$/,
    "runner_id must be 1-120 characters of A-Z a-z 0-9 . _ : @ -",
  );

/** A runner agent name (`external:<name>` rollouts are claimed by runners serving `<name>`). */
export const RunnerAgentName = z
  .string()
  .regex(/^[A-Za-z0-9._-]{1,100}$/, "agent names must be 1-100 characters of A-Z a-z 0-9 . _ -");

/** Shortest and longest lease a runner may ask for, and the default (heartbeat about every third of it). */
export const MIN_LEASE_MS = 2_000;
export const MAX_LEASE_MS = 600_000;
export const DEFAULT_LEASE_MS = 60_000;

const LeaseMs = z
  .int("lease_ms must be an integer")
  .min(MIN_LEASE_MS, `lease_ms must be >= ${MIN_LEASE_MS}`)
  .max(MAX_LEASE_MS, `lease_ms must be <= ${MAX_LEASE_MS}`);

/** `POST /v1/runners/claim`: up to `max` rollouts of the named agents, each leased for `lease_ms`. */
export const ClaimRequest = z
  .object({
    runner_id: RunnerId,
    agents: z
      .array(RunnerAgentName)
      .min(1, "agents must name at least one agent")
      .max(16, "agents must hold at most 16 names"),
    max: z
      .int("max must be an integer")
      .min(1, "max must be >= 1")
      .max(32, "max must be <= 32")
      .default(1),
    lease_ms: LeaseMs.default(DEFAULT_LEASE_MS),
    /** Named resources (the policy object's `PUT /v1/resources/:name`) to hand out with each claim, latest version. */
    resources: z
      .array(z.string().min(1).max(200))
      .max(32, "resources must hold at most 32 names")
      .default([]),
  })
  .strict();
export type ClaimRequest = z.infer<typeof ClaimRequest>;

/** One lease a heartbeat renews. */
export const HeldAttempt = z
  .object({ rollout_id: RolloutId, attempt: z.int().min(1, "attempt must be >= 1") })
  .strict();
export type HeldAttempt = z.infer<typeof HeldAttempt>;

/** `POST /v1/runners/heartbeat`: every lease one runner process holds, renewed for `lease_ms`. */
export const HeartbeatRequest = z
  .object({
    runner_id: RunnerId,
    lease_ms: LeaseMs.default(DEFAULT_LEASE_MS),
    leases: z.array(HeldAttempt).max(256, "leases must hold at most 256 entries").default([]),
  })
  .strict();
export type HeartbeatRequest = z.infer<typeof HeartbeatRequest>;

/** `POST /v1/rollouts/:id/attempts/:n/release`: the runner gives the attempt back (shutdown) or reports it crashed. */
export const ReleaseAttemptRequest = z
  .object({
    runner_id: RunnerId,
    /** `shutdown`: offered again without using up an attempt; `crashed`: the next attempt, or AGENT_ERROR after the last. */
    reason: z.enum(["shutdown", "crashed"]),
    error: z.string().max(4000).nullable().default(null),
  })
  .strict();
export type ReleaseAttemptRequest = z.infer<typeof ReleaseAttemptRequest>;

/**
 * The model endpoint bound to one attempt: any OpenAI-compatible client takes `base_url` and
 * `api_key`; `endpoint` is the same URL under Agent-lightning's name (absent from older servers).
 */
export const AttemptLlm = z.object({
  base_url: z.string(),
  endpoint: z.string().optional(),
  api_key: z.string(),
  model: z.string(),
});
export type AttemptLlm = z.infer<typeof AttemptLlm>;

/** One claimed rollout as a runner receives it (Agent-lightning's AttemptedRollout). */
export const ClaimedRollout = z.object({
  rollout_id: RolloutId,
  attempt: z.int().min(1),
  attempt_id: z.string(),
  runner_id: RunnerId,
  agent: z.string(),
  mode: z.enum(["train", "val"]),
  task: AgentTask,
  config: RolloutConfig,
  group: RolloutGroup.nullable(),
  lease_expires_at: z.number(),
  llm: AttemptLlm,
  resources: JsonObject,
});
export type ClaimedRollout = z.infer<typeof ClaimedRollout>;

/** Whether a heartbeat kept one lease; `lost` means stop: the attempt belongs to no one now (or another runner). */
export const HeartbeatOutcome = z.object({
  rollout_id: z.string(),
  attempt: z.int(),
  ok: z.boolean(),
  lease_expires_at: z.number().nullable(),
  reason: z.enum(["lost", "terminal", "not_found"]).nullable(),
});
export type HeartbeatOutcome = z.infer<typeof HeartbeatOutcome>;
