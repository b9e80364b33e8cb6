/** @module Bodies and views of the rollouts HTTP API. */
import { z } from "zod";
import { AgentTask } from "./agent-task";
import { RolloutConfig } from "./rollout-config";
import { RolloutStatus, TerminationReason } from "./termination";
import { Trajectory } from "./trajectory";
import { LlmCall } from "./llm-call";
import { ChatMessage } from "./chat";
import { Span, SpanInput } from "./span";
import { MemberOutcome } from "./member-outcome";
import { RolloutGroup } from "./rollout-group";
import { RolloutId } from "./rollout-id";
import { ForkRecord, RolloutTree } from "./rollout-tree";
import { OnlineAssignment, OnlineFields } from "./online";

/** The rollout id schema (its own file, so schemas this one imports can use it too). */
export { RolloutId } from "./rollout-id";

/** `POST /v1/rollouts` body. `rollout_id` makes creation idempotent; without it one is generated. */
export const CreateRolloutRequest = z
  .object({
    agent: z.string().min(1, "agent must name a registered agent"),
    task: AgentTask,
    config: RolloutConfig.default(RolloutConfig.parse({})),
    rollout_id: RolloutId.optional(),
    /** The GRPO group this rollout samples (batches set it); default: a group of one, stored, not fed to the trainer. */
    group: RolloutGroup.optional(),
    /**
     * Answer with the rollout's event stream instead of JSON (as OpenAI's `stream: true`): a
     * `created` event with the usual answer, then its steps and its `end`. Create and follow in
     * one request; not part of the rollout, so it never makes a repeated create a conflict.
     */
    stream: z.boolean().default(false),
  })
  .strict();
export type CreateRolloutRequest = z.infer<typeof CreateRolloutRequest>;

/**
 * How a rollout is run: `driven` by our step loop (a registered agent), or `external`: an agent
 * running elsewhere calls the rollout's gateway and finishes the rollout itself.
 */
export const RolloutKind = z.enum(["driven", "external"]);
export type RolloutKind = z.infer<typeof RolloutKind>;

/** The agent name that creates an external rollout. */
export const EXTERNAL_AGENT = "external";

/** Prefix of an external agent that names the runner agent serving it: `external:<runner agent>`. */
export const EXTERNAL_AGENT_PREFIX = "external:";

/** Whether `agent` makes an external rollout (`external`, or `external:<runner agent>`). */
export function isExternalAgent(agent: string): boolean {
  return (
    agent === EXTERNAL_AGENT ||
    (agent.startsWith(EXTERNAL_AGENT_PREFIX) && agent.length > EXTERNAL_AGENT_PREFIX.length)
  );
}

/** The runner agent name that may claim rollouts of `agent`: `external` → "external", `external:calc` → "calc"; null when driven. */
export function runnerAgentOf(agent: string): string | null {
  if (agent === EXTERNAL_AGENT) return EXTERNAL_AGENT;
  return isExternalAgent(agent) ? agent.slice(EXTERNAL_AGENT_PREFIX.length) : null;
}

/** What the session stores at creation. */
export const RolloutSpec = z.object({
  rollout_id: RolloutId,
  kind: RolloutKind.default("driven"),
  agent: z.string(),
  task: AgentTask,
  config: RolloutConfig,
  /** Null for a rollout created alone: it is then its own group of one (uid = rollout id), `infer` only. */
  group: RolloutGroup.nullable().default(null),
  created_at: z.number(),
  /**
   * The runner agent whose runners claim this external rollout (`POST /v1/runners/claim`), or null:
   * a driven rollout, or an external one its creator runs with the key it was given.
   */
  runner: z.string().nullable().default(null),
  /** Where a forked rollout sits in its tree (`POST /v1/rollouts/:id/fork`); null for a rollout not forked from another. */
  tree: RolloutTree.nullable().default(null),
  /** An online session (docs/online.md): its application, session id and the serving version it is assigned (sticky); null otherwise. */
  online: OnlineAssignment.nullable().optional(),
});
export type RolloutSpec = z.infer<typeof RolloutSpec>;

/**
 * For a rollout whose results feed the trainer: whether the feed has confirmed it holds the
 * result. A result message can still go missing after it was sent (a consumer that fails until
 * the dead-letter queue, a local queue lost in a crash), so the session asks the feed and sends
 * it again until it is there, a bounded number of times (`gave_up` after the last).
 */
export const PublicationDelivery = z.object({
  /** Checks made so far (each unconfirmed check sent the result again). */
  checks: z.int().min(0),
  /** When the next check is due; null once confirmed or given up. */
  next_check_at: z.number().nullable(),
  confirmed_at: z.number().nullable(),
  gave_up: z.boolean(),
});
export type PublicationDelivery = z.infer<typeof PublicationDelivery>;

/**
 * Publication of a finished rollout to R2 and ROLLOUT_RESULTS: none, pending, published or failed
 * (with the error), retried by the session's alarm until it succeeds; the session stores it and
 * its view shows it under this one name.
 */
export const Publication = z.object({
  status: z.enum(["none", "pending", "published", "failed"]),
  attempts: z.int().min(0),
  last_error: z.string().nullable(),
  published_at: z.number().nullable(),
  delivery: PublicationDelivery.nullable().default(null),
});
export type Publication = z.infer<typeof Publication>;

/** A rollout not yet published (and one that is never published: no sink configured). */
export const NO_PUBLICATION: Publication = {
  status: "none",
  attempts: 0,
  last_error: null,
  published_at: null,
  delivery: null,
};

/** `GET /v1/rollouts/:id`: status, outcome, the trajectory with its steps, and every LLM call. */
export const RolloutView = z.object({
  rollout_id: z.string(),
  agent: z.string(),
  status: RolloutStatus,
  termination_reason: TerminationReason.nullable(),
  /** Once ended: `policy` (scored), `infra` (an infrastructure failure: retried or withheld, never scored) or `cut`. */
  outcome: MemberOutcome.nullable().default(null),
  /** Cancelled by its batch to run again under KV pressure: its slot's next run (`.retry-<k>`) replaces it. */
  superseded: z.boolean().default(false),
  reward: z.number().nullable(),
  error: z.string().nullable(),
  created_at: z.number(),
  updated_at: z.number(),
  finished_at: z.number().nullable(),
  config: RolloutConfig,
  /** The GRPO group and slot attempt (`group.attempt`: 0 first, k for the k-th re-run after infrastructure failures); null alone. */
  group: RolloutGroup.nullable().default(null),
  /** A forked rollout's place in its tree (root, parent, branch step, path); null for one not forked. */
  tree: RolloutTree.nullable().default(null),
  /** The forks made of this rollout (`POST /v1/rollouts/:id/fork`), oldest first; its own steps, calls and outcome never change for them. */
  forks: z.array(ForkRecord).default([]),
  /** An online session's application, version, status and feedback (docs/online.md); absent otherwise. */
  online: OnlineFields.nullable().optional(),
  usage: z.object({ prompt_tokens: z.int(), completion_tokens: z.int(), llm_calls: z.int() }),
  trajectory: Trajectory,
  llm_calls: z.array(LlmCall),
  spans: z.array(Span),
  /**
   * The named resources the final attempt used, by resource name (`PUT /v1/resources/:name`):
   * `name@version`, or `default` for the declared default; `{}` for agents that declare none.
   */
  resource_versions: z.record(z.string(), z.string()).default({}),
  /** The conversation an external agent reported when it finished, or a workflow returned (null otherwise). */
  final_messages: z.array(ChatMessage).nullable(),
  /** Attempts started (function, LitAgent and workflow agents); 0 for stepwise and external rollouts. */
  attempts: z.int().min(0).default(0),
  /** The attempt whose outcome the rollout reports; calls of every other attempt are `excluded_from_training`. */
  final_attempt: z.int().min(1).nullable().default(null),
  /** The runner whose attempt ended the rollout (null unless a runner finished it). */
  final_runner_id: z.string().nullable().default(null),
  /** For a rollout runners claim: the runner holding its live attempt and until when (null when none does). */
  runner_lease: z
    .object({ runner_id: z.string(), attempt: z.int().min(1), expires_at: z.number() })
    .nullable()
    .default(null),
  /** Publication to R2 and ROLLOUT_RESULTS once finished: none, pending, published or failed (with the error). */
  publication: Publication.default(NO_PUBLICATION),
});
export type RolloutView = z.infer<typeof RolloutView>;

/** `POST /v1/rollouts/:id/events`: spans to add, in order. */
export const AddEventsRequest = z
  .object({
    events: z
      .array(SpanInput)
      .min(1, "events must not be empty")
      .max(1000, "events must hold at most 1000 spans"),
  })
  .strict();
export type AddEventsRequest = z.infer<typeof AddEventsRequest>;

/** `POST /v1/rollouts/:id/finish` (external rollouts): the outcome the agent reports. */
export const FinishRolloutRequest = z
  .object({
    /** Final reward; default: the last reward span's primary value, else none. */
    reward: z
      .number()
      .refine(Number.isFinite, "reward must be a finite number")
      .nullable()
      .optional(),
    /** The final conversation, kept with the rollout. */
    messages: z.array(ChatMessage).optional(),
    /** Default ENV_DONE. CANCELLED is what /cancel is for; STALE only the staleness rule sets. */
    termination_reason: TerminationReason.exclude(["CANCELLED", "STALE"]).default("ENV_DONE"),
    error: z.string().max(2000).nullable().optional(),
    /**
     * Whose doing a TIMEOUT, ENV_ERROR or AGENT_ERROR was: `policy` (an agent harness that ran past
     * its wall clock: the group keeps it, scored) or `infra` (re-run, withheld); default `infra`.
     */
    outcome: z.enum(["policy", "infra"]).optional(),
  })
  .strict();
export type FinishRolloutRequest = z.infer<typeof FinishRolloutRequest>;
