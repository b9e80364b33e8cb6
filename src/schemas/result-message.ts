/** @module The pointer message a finished rollout puts on ROLLOUT_RESULTS (the full record is in R2). */
import { z } from "zod";
import { MAX_GROUP_BATCH_ID_LENGTH, MAX_GROUP_UID_LENGTH, MAX_TRAINING_MODE_LENGTH } from "./rollout-group";
import { RolloutStatus, TerminationReason } from "./termination";

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
});
export type ResultMessage = z.infer<typeof ResultMessage>;
