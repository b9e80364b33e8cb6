/** @module The pointer message a finished rollout puts on ROLLOUT_RESULTS (the full record is in R2). */
import { z } from "zod";
import { RolloutStatus, TerminationReason } from "./termination";

/** Version of the ResultMessage shape. */
export const RESULT_MESSAGE_SCHEMA_VERSION = 1;

/**
 * Announces one finished rollout. Queue messages are capped at 128 KB, so this carries only
 * pointers and the fields a feed groups and filters by; samples live in the R2 object at `key`.
 * Delivered at least once: consumers dedupe by `rollout_id`.
 */
export const ResultMessage = z.object({
  schema_version: z.literal(RESULT_MESSAGE_SCHEMA_VERSION),
  rollout_id: z.string().min(1),
  status: RolloutStatus,
  termination_reason: TerminationReason.nullable(),
  reward: z.number().nullable(),
  uid: z.string().min(1),
  sample_index: z.int().min(0),
  group_size: z.int().min(1),
  batch_id: z.string().nullable(),
  training_mode: z.string(),
  data_manager: z.string(),
  /** Lowest policy_version_start and highest policy_version_end over the rollout's calls. */
  policy_version_start: z.int().min(0),
  policy_version_end: z.int().min(0),
  /** R2 key of the rollout record (trajectory, calls, samples) and of its ATIF document. */
  key: z.string().min(1),
  atif_key: z.string().min(1),
  samples: z.int().min(0),
  finished_at: z.number(),
});
export type ResultMessage = z.infer<typeof ResultMessage>;
