/** @module The mutable part of a rollout session, persisted as one validated row. */
import { z } from "zod";
import { MemberOutcome } from "../../../schemas/member-outcome";
import { RolloutStatus, TerminationReason } from "../../../schemas/termination";
import { NO_PUBLICATION, Publication } from "../../../schemas/rollout-api";

/** Version of the persisted SessionState shape. */
export const SESSION_STATE_SCHEMA_VERSION = 1;

/** A driver's exclusive right to advance the rollout until `expires_at`. */
export const Lease = z.object({
  lease_id: z.string(),
  driver_id: z.string(),
  epoch: z.int().min(1),
  expires_at: z.number(),
  /** Steps committed when the lease was granted: no new step by expiry counts as a stall. */
  steps_at_start: z.int().min(0),
  /** Attempts started when the lease was granted: starting one is progress too (attempt agents commit no steps). */
  attempts_at_start: z.int().min(0).default(0),
});
export type Lease = z.infer<typeof Lease>;

/** Everything about a rollout that changes while it runs (steps and calls live in their own tables). */
export const SessionState = z.object({
  schema_version: z.literal(SESSION_STATE_SCHEMA_VERSION),
  status: RolloutStatus,
  termination_reason: TerminationReason.nullable(),
  /** Whether the end may be scored (policy), is an infrastructure failure, or was cut; null while live. */
  outcome: MemberOutcome.nullable().default(null),
  /**
   * Cancelled by its batch to run again (a KV-pressure requeue): its slot's next run replaces it.
   * Published on its result, so the feed never holds it as a member whatever arrives first.
   */
  superseded: z.boolean().default(false),
  reward: z.number().nullable(),
  error: z.string().nullable(),
  lease: Lease.nullable(),
  /** Incremented per lease granted, so an old lease id can never match again. */
  epoch: z.int().min(0),
  stalls: z.int().min(0),
  handoffs: z.int().min(0),
  step_count: z.int().min(0),
  prompt_tokens: z.int().min(0),
  completion_tokens: z.int().min(0),
  llm_calls: z.int().min(0),
  /** Prompt + completion length of the latest call: a cheap upper bound for the next prompt. */
  last_context_tokens: z.int().min(0),
  /** Messages the latest call sent plus its answer, to know which messages are new since. */
  last_context_messages: z.int().min(0),
  /** The replica that served the latest call: later calls stick to it (prefix-cache reuse). */
  last_replica: z.string().nullable().default(null),
  /** The oldest policy version among the rollout's tokens (its calls' least `policy_version_start`); null before its first call. The staleness rule reads it. */
  oldest_policy_version: z.int().min(0).nullable().default(null),
  deadline: z.number(),
  /** Last call or event: an external rollout idle for step_timeout_ms ends TIMEOUT. */
  last_activity_at: z.number().default(0),
  updated_at: z.number(),
  finished_at: z.number().nullable(),
  /** Publication once finished (the view shows it as `publication` too); stored as `sink` before 2026-12. */
  publication: Publication.default(NO_PUBLICATION),
  /** Attempts started (attempt agents); persisted before an attempt runs, so a dead invocation's attempt still counts. */
  attempt: z.int().min(0).default(0),
  /** The attempt whose outcome the rollout reports, set when it ends; calls of other attempts are excluded from training. */
  final_attempt: z.int().min(1).nullable().default(null),
  /** The runner whose attempt ended the rollout (its result message tells the batch, which counts it). */
  final_runner_id: z.string().nullable().default(null),
  /** Attempts a runner handed back at shutdown: numbered like any attempt, but they do not use up `max_attempts`. */
  released: z.int().min(0).default(0),
  /** Set at the end when the one driver it ever had left no call counted at its admission shard (`FinishInput.admissions_released`). */
  admissions_released: z.boolean().default(false),
  /**
   * Counts the state's writes. A step's commit stores the state in the step's own row rather than
   * in `meta` (see `SessionStore.insertStep`): of the two, the higher revision is the current one.
   */
  revision: z.int().min(0).default(0),
});
export type SessionState = z.infer<typeof SessionState>;

/**
 * A state as read from storage. States stored before the publication had one name carry it under
 * `sink`; they are read as `publication`, so a rollout stored then still publishes, and its
 * delivery is still checked, after a deploy. The schema version is unchanged: the key is the only
 * difference, and a state written now still parses with the code before this reader (its
 * publication read as the default), which a rollback needs.
 */
export const StoredSessionState = z.preprocess(renameLegacySink, SessionState);

function renameLegacySink(raw: unknown): unknown {
  if (typeof raw !== "object" || raw === null || !("sink" in raw) || "publication" in raw)
    return raw;
  const { sink, ...rest } = raw as Record<string, unknown>;
  return { ...rest, publication: sink };
}

const STATE_FIELDS = Object.keys(SessionState.shape) as Array<
  keyof SessionState & keyof typeof SessionState.shape
>;

/**
 * `SessionState.parse(next)`, re-checking only the fields that differ from `previous`, a state
 * that already passed this schema. A field equal to the valid one (the same primitive, or the
 * same object: states are never changed in place, every change builds new objects with spread)
 * is valid as it is; every other field is parsed with its own schema. A step changes a handful of
 * the state's 30 fields, and parsing all of them interpreted (workerd allows zod no code
 * generation) was most of a state write's CPU, written several times per rollout. Any invalid
 * field throws the whole schema's error, so messages name the field as `parse` does.
 */
export function parseStateChange(
  next: SessionState,
  previous: SessionState | undefined,
): SessionState {
  if (!previous) return SessionState.parse(next);
  const valid: Record<string, unknown> = {};
  for (const field of STATE_FIELDS) {
    const value = next[field];
    if (Object.is(value, previous[field])) {
      valid[field] = value;
      continue;
    }
    const checked = SessionState.shape[field].safeParse(value);
    if (!checked.success) return SessionState.parse(next);
    valid[field] = checked.data;
  }
  return valid as SessionState;
}

/** The state of a rollout that was just created. */
export function initialState(now: number, deadline: number): SessionState {
  return {
    schema_version: SESSION_STATE_SCHEMA_VERSION,
    status: "queued",
    termination_reason: null,
    outcome: null,
    superseded: false,
    reward: null,
    error: null,
    lease: null,
    epoch: 0,
    stalls: 0,
    handoffs: 0,
    step_count: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    llm_calls: 0,
    last_context_tokens: 0,
    last_context_messages: 0,
    last_replica: null,
    oldest_policy_version: null,
    deadline,
    last_activity_at: now,
    updated_at: now,
    finished_at: null,
    publication: NO_PUBLICATION,
    attempt: 0,
    final_attempt: null,
    final_runner_id: null,
    released: 0,
    admissions_released: false,
    revision: 0,
  };
}
