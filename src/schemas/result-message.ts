/** @module The pointer message a finished rollout puts on ROLLOUT_RESULTS (the full record is in R2). */
import { z } from "zod";
import {
  MAX_GROUP_BATCH_ID_LENGTH,
  MAX_GROUP_UID_LENGTH,
  MAX_TRAINING_MODE_LENGTH,
} from "./rollout-group";
import {
  InfraFailurePolicy,
  MAX_MEMBER_RETRIES,
  MemberOutcome,
  outcomeOf,
  SignalFilter,
} from "./member-outcome";
import { RolloutStatus, TerminationReason } from "./termination";
import { GenerationStats } from "./generation-stats";

/** Longest R2 key a result message points at (R2 allows 1024 bytes). */
const MAX_KEY_LENGTH = 1024;

/** Version of the ResultMessage shape. */
export const RESULT_MESSAGE_SCHEMA_VERSION = 1;

/**
 * Announces one finished rollout. Queue messages are capped at 128 KB, so this carries only
 * pointers and the fields a feed groups and filters by, each bounded (the largest possible message
 * is a few KB); samples live in the R2 object at `key`.
 * Delivered at least once: consumers dedupe by `rollout_id`.
 */
export const ResultMessage = z.object({
  schema_version: z.literal(RESULT_MESSAGE_SCHEMA_VERSION),
  rollout_id: z.string().min(1).max(256),
  status: RolloutStatus,
  termination_reason: TerminationReason.nullable(),
  reward: z.number().nullable(),
  uid: z.string().min(1).max(MAX_GROUP_UID_LENGTH),
  sample_index: z.int().min(0),
  group_size: z.int().min(1),
  batch_id: z.string().max(MAX_GROUP_BATCH_ID_LENGTH).nullable(),
  training_mode: z.string().max(MAX_TRAINING_MODE_LENGTH),
  data_manager: z.string().max(64),
  /** Lowest policy_version_start and highest policy_version_end over the rollout's calls. */
  policy_version_start: z.int().min(0),
  policy_version_end: z.int().min(0),
  /** R2 key of the rollout record (trajectory, calls, samples) and of its ATIF document. */
  key: z.string().min(1).max(MAX_KEY_LENGTH),
  atif_key: z.string().min(1).max(MAX_KEY_LENGTH),
  samples: z.int().min(0),
  finished_at: z.number(),
  // Fields of a group's signal (issue "true signal"); absent in messages published before them.
  /** Whether the rollout may be scored (see member-outcome.ts); absent: derived from the reason. */
  outcome: MemberOutcome.optional(),
  /** Which run of its slot this is (0 first). */
  member_attempt: z.int().min(0).max(MAX_MEMBER_RETRIES).default(0),
  /** An infrastructure failure whose slot is re-run: never a member, its replacement is. */
  superseded: z.boolean().default(false),
  /** The group's filter metric for this rollout (null: no filter, or the rollout has no such value). */
  metric: z.number().nullable().default(null),
  signal_filter: SignalFilter.nullable().default(null),
  on_infra_failure: InfraFailurePolicy.default("withhold"),
  /** What its calls generated per policy version, and how many an interrupting sync cut (absent in messages published before it). */
  generation: GenerationStats.optional(),
  /**
   * The runner whose attempt ended the rollout (null otherwise): its batch counts the finish from
   * here, in the consumer's batched `onResults`, instead of a request per rollout.
   */
  runner: z
    .object({ runner_id: z.string().min(1).max(256), attempt: z.int().min(1) })
    .nullable()
    .default(null),
});
export type ResultMessage = z.infer<typeof ResultMessage>;

/** The message's outcome: as published, or derived from its reason for messages that predate it. */
export function resultOutcome(
  message: Pick<ResultMessage, "outcome" | "termination_reason">,
): MemberOutcome {
  return message.outcome ?? outcomeOf(message.termination_reason);
}
